// Overtraining: training goes on after the window means of the training and validation losses
// stopped beating their best.
#include <gtest/gtest.h>

#include <limits>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/series_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::Steps;
using testing::TempDir;

constexpr Mode T = Mode::Train;
constexpr Mode E = Mode::Eval;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// TRAIN only, windows of 5 (patience_train's default):
//   steps  0-4  mean 0.8    the first window: the best
//   steps  5-9  mean 0.6    improves (its lucky batch 0.3 at step 6 is only one batch of five)
//   steps 10-14 mean 0.6    not below 0.6 - 0.01: stalled from step 14
//   steps 15-19 mean 0.595  not below 0.59: still stalled
//   steps 20-24 mean 0.5    improves at step 24
// so the rule fires at 14-23.
Trial write_train_plateau(const TempDir& dir) {
  std::vector<std::pair<Mode, double>> losses = {{T, 1.0}, {T, 0.9}, {T, 0.8}, {T, 0.7}, {T, 0.6},
                                                 {T, 0.9}, {T, 0.3}, {T, 0.7}, {T, 0.6}, {T, 0.5},
                                                 {T, 0.6}, {T, 0.6}, {T, 0.6}, {T, 0.6}, {T, 0.6}};
  for (int i = 0; i < 5; ++i) losses.push_back({T, 0.595});
  for (int i = 0; i < 5; ++i) losses.push_back({T, 0.5});
  return testing::write_job(dir.path() / "train", testing::loss_steps(losses));
}

// patience_train 3, patience_validation 2, evaluation passes of two EVAL steps:
//   T  0-2  1.0 0.8 0.6    training window mean 0.8: best
//   E  3-4  0.9 0.7        validation window mean 0.8 (closed at step 5): best
//   T  5-7  0.5 0.5 0.5    0.5: improves
//   E  8-9  0.6 0.6        0.6: improves
//   T 10-12 0.5 0.45 0.55  0.5: training stalls at 12, but validation still improves: quiet
//   E 13-14 0.65 0.6       0.625: validation stalls (judged at step 15)
//   T 15-17 0.5 0.52 0.48  both stalled: fires at 15, 16 and 17 (window mean 0.5 at 17)
//   E 18-19 0.4 0.42       0.41: validation improves (judged at 20)
//   T 20-22 0.5 0.49 0.51  quiet again (training stalls at 22, validation does not)
Trial write_validation_plateau(const TempDir& dir) {
  return testing::write_job(
      dir.path() / "validation",
      testing::loss_steps({{T, 1.0},  {T, 0.8},  {T, 0.6}, {E, 0.9},  {E, 0.7},  {T, 0.5},
                           {T, 0.5},  {T, 0.5},  {E, 0.6}, {E, 0.6},  {T, 0.5},  {T, 0.45},
                           {T, 0.55}, {E, 0.65}, {E, 0.6}, {T, 0.5},  {T, 0.52}, {T, 0.48},
                           {E, 0.4},  {E, 0.42}, {T, 0.5}, {T, 0.49}, {T, 0.51}}));
}

const RuleParameters kShortPatience = {{"patience_train", "3"}, {"patience_validation", "2"}};

TEST(OvertrainingRule, FiresWhenTrainingWindowMeansStopImproving) {
  TempDir dir;
  const Trial trial = write_train_plateau(dir);
  EXPECT_EQ(testing::fired_steps("Overtraining", trial),
            (Steps{14, 15, 16, 17, 18, 19, 20, 21, 22, 23}));

  const Finding finding = testing::finding_at("overtraining", trial, 14);
  EXPECT_EQ(finding.tensors, std::vector<std::string>{"CrossEntropyLoss_output_0"});
  ASSERT_EQ(finding.figures.size(), 5u);
  EXPECT_NEAR(finding.figures[0].value, 0.6, 1e-12);  // training_mean
  EXPECT_EQ(finding.figures[0].name, "training_mean");
  EXPECT_NEAR(finding.figures[1].value, 0.6, 1e-12);
  EXPECT_EQ(finding.figures[1].name, "best_training_mean");
  EXPECT_EQ(finding.figures[2], (Figure{"patience_train", 5, std::nullopt}));
  EXPECT_EQ(finding.figures[3], (Figure{"patience_validation", 10, std::nullopt}));
  EXPECT_EQ(finding.figures[4], (Figure{"delta", 0.01, std::nullopt}));
  EXPECT_EQ(finding.message,
            "CrossEntropyLoss_output_0: training goes on while the model stopped improving: mean "
            "training loss 0.6 over 5 TRAIN steps (global 10-14) is not below the best window "
            "mean 0.6 (global 5-9) by more than delta 0.01");
}

TEST(OvertrainingRule, FiresWhenValidationAndTrainingBothStopImprovingAndTrainingGoesOn) {
  TempDir dir;
  const Trial trial = write_validation_plateau(dir);
  EXPECT_EQ(testing::fired_steps("Overtraining", trial, kShortPatience), (Steps{15, 16, 17}));

  const Finding finding = testing::finding_at("Overtraining", trial, 15, kShortPatience);
  ASSERT_EQ(finding.figures.size(), 7u);
  EXPECT_EQ(finding.figures[2].name, "validation_mean");
  EXPECT_NEAR(finding.figures[2].value, 0.625, 1e-12);
  EXPECT_EQ(finding.figures[3].name, "best_validation_mean");
  EXPECT_NEAR(finding.figures[3].value, 0.6, 1e-12);
  EXPECT_EQ(finding.message,
            "CrossEntropyLoss_output_0: training goes on while the model stopped improving: mean "
            "training loss 0.5 over 3 TRAIN steps (global 10-12) is not below the best window "
            "mean 0.5 (global 5-7) by more than delta 0.01; mean validation loss 0.625 over 2 "
            "EVAL steps (global 13-14) is not below the best window mean 0.6 (global 8-9) by "
            "more than delta 0.01");
}

// Evaluation passes shorter than patience_validation are pooled: a validation window ends with
// the pass in which it reaches patience_validation saves, so a lucky batch (0.2) does not set
// the optimum. patience_train 2, patience_validation 3, passes of two EVAL steps:
//   T 0-1 1.0 0.8, E 2-3 1.0 0.2 (window open: 2 saves), T 4-5 0.7 0.7,
//   E 6-7 1.0 0.6 (window of 4 saves, mean 0.7: best, judged at step 8),
//   T 8-9 0.7 0.7 (training stalls; validation has only its first window: quiet),
//   E 10-11 0.6 0.8, T 12-13 0.7 0.7, E 14-15 0.8 0.6 (mean 0.7: stalled, judged at 16),
//   T 16-17 0.7 0.7: fires at 16 and 17.
TEST(OvertrainingRule, PoolsShortEvaluationPassesIntoOneValidationWindow) {
  TempDir dir;
  const Trial trial =
      testing::write_job(dir.path() / "short-passes", testing::loss_steps({{T, 1.0},
                                                                           {T, 0.8},
                                                                           {E, 1.0},
                                                                           {E, 0.2},
                                                                           {T, 0.7},
                                                                           {T, 0.7},
                                                                           {E, 1.0},
                                                                           {E, 0.6},
                                                                           {T, 0.7},
                                                                           {T, 0.7},
                                                                           {E, 0.6},
                                                                           {E, 0.8},
                                                                           {T, 0.7},
                                                                           {T, 0.7},
                                                                           {E, 0.8},
                                                                           {E, 0.6},
                                                                           {T, 0.7},
                                                                           {T, 0.7}}));
  const RuleParameters parameters = {{"patience_train", "2"}, {"patience_validation", "3"}};
  EXPECT_EQ(testing::fired_steps("Overtraining", trial, parameters), (Steps{16, 17}));
  const Finding finding = testing::finding_at("Overtraining", trial, 16, parameters);
  EXPECT_NE(finding.message.find("over 4 EVAL steps (global 10-15)"), std::string::npos)
      << finding.message;
}

TEST(OvertrainingRule, StaysQuietWhileWindowMeansImprove) {
  TempDir dir;
  // Single batches would set the optimum at 0.2 (step 1) and never beat it; the window means
  // 0.84, 0.8 and 0.72 each improve by more than delta.
  const Trial noisy = testing::write_job(dir.path() / "noisy", testing::loss_steps({{T, 1.0},
                                                                                    {T, 0.2},
                                                                                    {T, 1.0},
                                                                                    {T, 1.0},
                                                                                    {T, 1.0},
                                                                                    {T, 0.8},
                                                                                    {T, 0.8},
                                                                                    {T, 0.8},
                                                                                    {T, 0.8},
                                                                                    {T, 0.8},
                                                                                    {T, 0.7},
                                                                                    {T, 0.75},
                                                                                    {T, 0.7},
                                                                                    {T, 0.75},
                                                                                    {T, 0.7}}));
  const auto rule = testing::make_rule("Overtraining", noisy);
  const InvokeResult result = invoke_rule(*rule);
  EXPECT_EQ(result.triggered_steps, Steps{});
  EXPECT_EQ(result.steps_evaluated, 15);

  // With patience_validation 10, the validation job's 8 EVAL saves never fill a validation
  // window; the job has evaluated, so training alone does not decide and the rule stays quiet.
  EXPECT_EQ(testing::fired_steps("Overtraining", write_validation_plateau(dir),
                                 {{"patience_train", "3"}}),
            Steps{});
}

TEST(OvertrainingRule, DivergedWindowsAreNeitherOptimumNorStall) {
  TempDir dir;
  std::vector<std::pair<Mode, double>> losses;
  for (int i = 0; i < 5; ++i) losses.push_back({T, 1.0});
  for (int i = 0; i < 10; ++i) losses.push_back({T, kNaN});
  const Trial diverged = testing::write_job(dir.path() / "nan", testing::loss_steps(losses));
  EXPECT_EQ(testing::fired_steps("Overtraining", diverged), Steps{});

  // A finite window after the NaN ones is judged against the best finite one.
  for (int i = 0; i < 5; ++i) losses.push_back({T, 1.0});
  const Trial recovered = testing::write_job(dir.path() / "back", testing::loss_steps(losses));
  EXPECT_EQ(testing::fired_steps("Overtraining", recovered), Steps{19});
}

TEST(OvertrainingRule, RejectsBadParametersByName) {
  TempDir dir;
  const Trial trial = write_train_plateau(dir);
  EXPECT_EQ(testing::config_error("Overtraining", trial, {{"patience_train", "0"}}),
            "rule Overtraining: parameter patience_train: \"0\" must be at least 1");
  EXPECT_EQ(testing::config_error("Overtraining", trial, {{"patience_validation", "0"}}),
            "rule Overtraining: parameter patience_validation: \"0\" must be at least 1");
  EXPECT_EQ(testing::config_error("Overtraining", trial, {{"delta", "small"}}),
            "rule Overtraining: parameter delta: \"small\" is not a number");
  EXPECT_EQ(testing::config_error("Overtraining", trial, {{"delta", "-0.1"}}),
            "rule Overtraining: parameter delta: \"-0.1\" must not be negative");
  EXPECT_NE(testing::config_error("Overtraining", trial, {{"tensor_regex", ".*"}})
                .find("unknown parameter \"tensor_regex\""),
            std::string::npos);
}

}  // namespace
}  // namespace rulestream
