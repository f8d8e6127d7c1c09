// ClassImbalance on labels and predictions named as smdebug's XGBoost hook saves them.
#include <gtest/gtest.h>

#include "rules/rule.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/series_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::classified;
using testing::floats;
using testing::Steps;
using testing::TempDir;

// Ten samples a step, all predicted right. Class counts (0, 1) after each step: (9, 1),
// (18, 2), (28, 2), (38, 2): the imbalance is 9, 9, 14, 19.
Trial write_imbalanced(const TempDir& dir) {
  const std::vector<double> mostly_zero{0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  const std::vector<double> zeros(10, 0.0);
  return testing::write_job(
      dir.path() / "imbalanced",
      {classified(mostly_zero, floats(mostly_zero)), classified(mostly_zero, floats(mostly_zero)),
       classified(zeros, floats(zeros)), classified(zeros, floats(zeros))});
}

// Balanced classes; class 1 is predicted as 0 every time (binary:logistic probabilities below
// 0.5) at steps 0 and 1, and as scores (samples x classes) favouring class 0 at step 2.
Trial write_mispredicted(const TempDir& dir) {
  const std::vector<double> labels{0, 1, 0, 1, 0, 1, 0, 1, 0, 1};
  const std::vector<double> probabilities{0.1, 0.4, 0.2, 0.3, 0.1, 0.2, 0.3, 0.4, 0.1, 0.2};
  return testing::write_job(
      dir.path() / "mispredicted",
      {classified(labels, floats(probabilities)), classified(labels, floats(probabilities))});
}

TEST(ClassImbalanceRule, FiresOnceEnoughSamplesShowTheImbalance) {
  TempDir dir;
  const Trial trial = write_imbalanced(dir);
  EXPECT_EQ(testing::fired_steps("ClassImbalance", trial, {{"samples", "20"}}), (Steps{2, 3}));
  EXPECT_EQ(testing::fired_steps("class_imbalance", trial, {{"samples", "10"}}), (Steps{2, 3}));
  EXPECT_EQ(testing::fired_steps("ClassImbalance", trial, {{"samples", "40"}}), Steps{3});

  const auto rule = testing::make_rule("ClassImbalance", trial, {{"samples", "20"}});
  EXPECT_EQ(invoke_rule(*rule, 0, 2).triggered_steps, Steps{});
  EXPECT_THROW(rule->invoke(2), RuleEvaluationConditionMet);
  const Finding& finding = rule->last_finding();
  EXPECT_EQ(finding.tensors, (std::vector<std::string>{"labels", "predictions"}));
  EXPECT_EQ(finding.figures.front(), (Figure{"imbalance", 14, std::nullopt}));
  EXPECT_EQ(finding.figures.back(), (Figure{"samples_seen", 30, std::nullopt}));
  EXPECT_EQ(finding.message,
            "class 0 has 28 samples, class 1 only 2: imbalance 14 > threshold 10 after 30 labels");
}

TEST(ClassImbalanceRule, FiresWhenAClassIsMostlyMispredicted) {
  TempDir dir;
  const Trial trial = write_mispredicted(dir);
  EXPECT_EQ(testing::fired_steps("ClassImbalance", trial, {{"samples", "20"}}), Steps{1});
  const auto rule = testing::make_rule("ClassImbalance", trial, {{"samples", "10"}});
  EXPECT_THROW(rule->invoke(0), RuleEvaluationConditionMet);
  EXPECT_EQ(rule->last_finding().message,
            "class 1 is mispredicted in 5 of 5 samples (1 > threshold 0.7) after 10 labels");

  // The same mistakes as class scores, one row per sample.
  TempDir scores_dir;
  const std::vector<double> labels{0, 1, 0, 1};
  const TensorValue scores = testing::float_rows(4, {0.9, 0.1, 0.6, 0.4, 0.8, 0.2, 0.7, 0.3});
  const Trial scored =
      testing::write_job(scores_dir.path() / "scores", {classified(labels, scores)});
  EXPECT_EQ(testing::fired_steps("ClassImbalance", scored, {{"samples", "4"}, {"argmax", "True"}}),
            Steps{0});
}

TEST(ClassImbalanceRule, StaysQuietUntilSamplesAndWithinTheThresholds) {
  TempDir dir;
  const Trial trial = write_imbalanced(dir);
  const auto rule = testing::make_rule("ClassImbalance", trial);  // 500 samples: never enough
  const InvokeResult result = invoke_rule(*rule);
  EXPECT_EQ(result.triggered_steps, Steps{});
  EXPECT_EQ(result.steps_evaluated, 4);
  EXPECT_EQ(testing::fired_steps("ClassImbalance", trial,
                                 {{"samples", "20"}, {"threshold_imbalance", "20"}}),
            Steps{});
  EXPECT_EQ(testing::fired_steps("ClassImbalance", write_mispredicted(dir),
                                 {{"samples", "20"}, {"threshold_misprediction", "1"}}),
            Steps{});
}

TEST(ClassImbalanceRule, NamesTheTensorsWhenLabelsAndPredictionsDoNotPair) {
  TempDir dir;
  const Trial trial = testing::write_job(
      dir.path() / "job", {classified({0, 1, 0}, floats({0, 1})), classified({0}, floats({2}))});
  const auto rule = testing::make_rule("ClassImbalance", trial, {{"samples", "1"}});
  try {
    rule->invoke(0);
    FAIL() << "expected an error";
  } catch (const RuleEvaluationConditionMet&) {
    FAIL() << "expected an error, not a finding";
  } catch (const RulestreamError& error) {
    EXPECT_STREQ(error.what(),
                 "at step 0 the labels hold 3 samples but the predictions 2 (tensors labels, "
                 "predictions)");
  }
  const auto with_argmax =
      testing::make_rule("ClassImbalance", trial, {{"samples", "1"}, {"argmax", "true"}});
  EXPECT_THROW(with_argmax->invoke(1), RulestreamError);
}

TEST(ClassImbalanceRule, RejectsBadParametersByName) {
  TempDir dir;
  const Trial trial = write_imbalanced(dir);
  EXPECT_EQ(testing::config_error("ClassImbalance", trial, {{"threshold_misprediction", "1.5"}}),
            "rule ClassImbalance: parameter threshold_misprediction: \"1.5\" is not a fraction "
            "between 0 and 1");
  EXPECT_EQ(testing::config_error("ClassImbalance", trial, {{"samples", "many"}}),
            "rule ClassImbalance: parameter samples: \"many\" is not an integer");
  EXPECT_EQ(
      testing::config_error("ClassImbalance", trial, {{"argmax", "yes"}}),
      "rule ClassImbalance: parameter argmax: \"yes\" is not a boolean (True, False, 1 or 0)");
  EXPECT_NE(
      testing::config_error("ClassImbalance", trial, {{"labels_regex", "(labels"}})
          .find("rule ClassImbalance: parameter labels_regex: \"(labels\" is not a valid regex"),
      std::string::npos);
}

}  // namespace
}  // namespace rulestream
