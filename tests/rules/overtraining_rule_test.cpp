// Overtraining on a loss whose TRAIN or EVAL series stops improving.
#include "rules/overtraining_rule.hpp"

#include <gtest/gtest.h>

#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/series_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::Steps;
using testing::TempDir;

constexpr Mode T = Mode::Train;
constexpr Mode E = Mode::Eval;

// TRAIN only: the optimum 0.7 comes at step 3; steps 4-8 do not beat it by more than 0.01
// (step 8 is 5 steps after it); 0.65 at step 9 is a new optimum.
Trial write_train_plateau(const TempDir& dir) {
  return testing::write_job(dir.path() / "train", testing::loss_steps({{T, 1.0},
                                                                       {T, 0.9},
                                                                       {T, 0.8},
                                                                       {T, 0.7},
                                                                       {T, 0.7},
                                                                       {T, 0.695},
                                                                       {T, 0.7},
                                                                       {T, 0.7},
                                                                       {T, 0.7},
                                                                       {T, 0.65}}));
}

// Training improves throughout; validation (EVAL mode steps 0-3 at global 1, 3, 5, 7) never
// beats its first value.
Trial write_validation_plateau(const TempDir& dir) {
  return testing::write_job(
      dir.path() / "validation",
      testing::loss_steps(
          {{T, 1.0}, {E, 2.0}, {T, 0.9}, {E, 2.0}, {T, 0.8}, {E, 2.1}, {T, 0.7}, {E, 2.0}}));
}

TEST(OvertrainingRule, FiresWhenTrainingLossStopsImprovingForPatienceSteps) {
  TempDir dir;
  const Trial trial = write_train_plateau(dir);
  EXPECT_EQ(testing::fired_steps("Overtraining", trial), Steps{8});
  EXPECT_EQ(testing::fired_steps("overtraining", trial, {{"patience_train", "3"}}),
            (Steps{6, 7, 8}));

  const auto rule = testing::make_rule("Overtraining", trial);
  EXPECT_EQ(invoke_rule(*rule, 0, 8).triggered_steps, Steps{});
  EXPECT_THROW(rule->invoke(8), RuleEvaluationConditionMet);
  const Finding& finding = rule->last_finding();
  EXPECT_EQ(finding.tensors, std::vector<std::string>{"CrossEntropyLoss_output_0"});
  EXPECT_EQ(finding.figures[1], (Figure{"best_loss", 0.7, "CrossEntropyLoss_output_0"}));
  EXPECT_EQ(finding.figures[2], (Figure{"best_step", 3, "CrossEntropyLoss_output_0"}));
  EXPECT_EQ(finding.message,
            "CrossEntropyLoss_output_0: training loss 0.7 has not improved by more than delta "
            "0.01 on its best 0.7 (step 3) for 5 TRAIN steps >= patience 5");
}

TEST(OvertrainingRule, FiresWhenValidationLossStopsImproving) {
  TempDir dir;
  const Trial trial = write_validation_plateau(dir);
  EXPECT_EQ(testing::fired_steps("Overtraining", trial, {{"patience_validation", "2"}}),
            (Steps{5, 7}));
  const auto rule = testing::make_rule("Overtraining", trial, {{"patience_validation", "2"}});
  EXPECT_EQ(invoke_rule(*rule, 0, 7).triggered_steps, Steps{5});
  EXPECT_THROW(rule->invoke(7), RuleEvaluationConditionMet);
  EXPECT_EQ(rule->last_finding().message,
            "CrossEntropyLoss_output_0: validation loss 2 has not improved by more than delta "
            "0.01 on its best 2 (step 1) for 3 EVAL steps >= patience 2");
}

TEST(OvertrainingRule, StaysQuietWhileLossesImproveWithinPatience) {
  TempDir dir;
  EXPECT_EQ(
      testing::fired_steps("Overtraining", write_train_plateau(dir), {{"patience_train", "6"}}),
      Steps{});
  const auto rule = testing::make_rule("Overtraining", write_validation_plateau(dir));
  const InvokeResult result = invoke_rule(*rule);
  EXPECT_EQ(result.triggered_steps, Steps{}) << "validation patience 10 is never reached";
  EXPECT_EQ(result.steps_evaluated, 8);
}

TEST(OvertrainingRule, RejectsBadParametersByName) {
  TempDir dir;
  const Trial trial = write_train_plateau(dir);
  EXPECT_EQ(testing::config_error("Overtraining", trial, {{"patience_validation", "0"}}),
            "rule Overtraining: parameter patience_validation: \"0\" must be at least 1");
  EXPECT_EQ(testing::config_error("Overtraining", trial, {{"delta", "small"}}),
            "rule Overtraining: parameter delta: \"small\" is not a number");
  EXPECT_NE(testing::config_error("Overtraining", trial, {{"tensor_regex", ".*"}})
                .find("unknown parameter \"tensor_regex\""),
            std::string::npos);
}

}  // namespace
}  // namespace rulestream
