// Overfit on a loss saved at TRAIN steps and at EVAL passes between them.
#include <gtest/gtest.h>

#include "rules/rule.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/series_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::Steps;
using testing::TempDir;

constexpr Mode T = Mode::Train;
constexpr Mode E = Mode::Eval;

// Global steps: 0-1 TRAIN 1.0 | 2 EVAL 1.05 (ratio 0.05) | 3-4 TRAIN 0.8 | 5-6 EVAL 1.0
// (ratio 0.25 at both) | 7-8 TRAIN 0.5 | 9 EVAL 0.52 (ratio 0.04).
Trial write_losses(const TempDir& dir) {
  auto steps = testing::loss_steps({{T, 1.0},
                                    {T, 1.0},
                                    {E, 1.05},
                                    {T, 0.8},
                                    {T, 0.8},
                                    {E, 1.0},
                                    {E, 1.0},
                                    {T, 0.5},
                                    {T, 0.5},
                                    {E, 0.52}});
  // An accuracy that is not a loss: outside the losses collection, never compared.
  for (auto& step : steps) step.tensors.push_back({"accuracy", testing::scalar(0.1)});
  return testing::write_job(dir.path() / "job", steps);
}

TEST(OverfitRule, FiresWhenValidationLossExceedsTrainingLossByTheRatio) {
  TempDir dir;
  const Trial trial = write_losses(dir);
  EXPECT_EQ(testing::fired_steps("Overfit", trial), (Steps{5, 6}));
  EXPECT_EQ(testing::fired_steps("overfit", trial, {{"patience", "2"}}), Steps{6});
  EXPECT_EQ(testing::fired_steps("Overfit", trial, {{"tensor_regex", "Loss_output"}}),
            (Steps{5, 6}));

  const auto rule = testing::make_rule("Overfit", trial);
  EXPECT_EQ(invoke_rule(*rule, 0, 5).triggered_steps, Steps{});
  EXPECT_THROW(rule->invoke(5), RuleEvaluationConditionMet);
  const Finding& finding = rule->last_finding();
  EXPECT_EQ(finding.tensors, std::vector<std::string>{"CrossEntropyLoss_output_0"});
  ASSERT_EQ(finding.figures.size(), 6u);
  EXPECT_EQ(finding.figures[0], (Figure{"validation_mean", 1.0, "CrossEntropyLoss_output_0"}));
  EXPECT_EQ(finding.figures[1], (Figure{"training_mean", 0.8, "CrossEntropyLoss_output_0"}));
  EXPECT_NEAR(finding.figures[2].value, 0.25, 1e-12);
  EXPECT_EQ(finding.figures[4], (Figure{"ratio_threshold", 0.1, std::nullopt}));
  EXPECT_EQ(finding.message,
            "CrossEntropyLoss_output_0: mean validation loss 1 over 1 EVAL step(s) vs mean "
            "training loss 0.8 over the 2 TRAIN step(s) before: ratio 0.25 > ratio_threshold 0.1 "
            "at 1 EVAL step(s) in a row (patience 1)");
}

TEST(OverfitRule, StaysQuietWithinTheRatioPatienceOrBeforeStartStep) {
  TempDir dir;
  const Trial trial = write_losses(dir);
  const auto rule = testing::make_rule("Overfit", trial, {{"ratio_threshold", "0.3"}});
  const InvokeResult result = invoke_rule(*rule);
  EXPECT_EQ(result.triggered_steps, Steps{});
  EXPECT_EQ(result.steps_evaluated, 10);
  EXPECT_EQ(testing::fired_steps("Overfit", trial, {{"patience", "3"}}), Steps{});
  // From step 6 the pass at 5-6 has no training window before it; step 9's ratio is 0.04.
  EXPECT_EQ(testing::fired_steps("Overfit", trial, {{"start_step", "6"}}), Steps{});
  EXPECT_EQ(testing::fired_steps("Overfit", trial, {{"tensor_regex", "accuracy"}}), Steps{});
}

TEST(OverfitRule, RejectsBadParametersByName) {
  TempDir dir;
  const Trial trial = write_losses(dir);
  EXPECT_EQ(testing::config_error("Overfit", trial, {{"patience", "0"}}),
            "rule Overfit: parameter patience: \"0\" must be at least 1");
  EXPECT_EQ(testing::config_error("Overfit", trial, {{"start_step", "1.5"}}),
            "rule Overfit: parameter start_step: \"1.5\" is not an integer");
  EXPECT_EQ(testing::config_error("Overfit", trial, {{"ratio_threshold", "-0.1"}}),
            "rule Overfit: parameter ratio_threshold: \"-0.1\" must not be negative");
}

}  // namespace
}  // namespace rulestream
