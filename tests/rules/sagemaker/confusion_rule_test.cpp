// Confusion on labels and predictions named as smdebug's XGBoost hook saves them.
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

// Step 0: all right. Step 1: one class-1 sample predicted as 0, so the column of class 0 holds
// 5 right and 1 wrong (5/6 = 0.83 < 0.9; 1/6 = 0.17 > 0.1). Step 2: three classes as
// multi:softprob scores (samples x classes), all right.
Trial write_predictions(const TempDir& dir) {
  const std::vector<double> labels{0, 0, 0, 0, 0, 1, 1, 1, 1, 1};
  const TensorValue scores = testing::float_rows(3, {0.8, 0.1, 0.1, 0.2, 0.7, 0.1, 0.1, 0.2, 0.7});
  return testing::write_job(
      dir.path() / "xgb",
      {classified(labels, floats(labels)),
       classified(labels, floats({0, 0, 0, 0, 0, 0, 1, 1, 1, 1})), classified({0, 1, 2}, scores)});
}

TEST(ConfusionRule, FiresWhenAPredictedClassHoldsTooManyOthers) {
  TempDir dir;
  const Trial trial = write_predictions(dir);
  EXPECT_EQ(testing::fired_steps("Confusion", trial), Steps{1});
  // Not the tensor named "labels" (absent here): the tensors of the collection "labels".
  EXPECT_EQ(testing::fired_steps("confusion", trial, {{"labels", "y_true"}}), Steps{1});
  EXPECT_EQ(testing::fired_steps("Confusion", trial, {{"min_diag", "0.8"}}), Steps{1})
      << "the off-diagonal 1/6 still exceeds 0.1";

  const auto rule = testing::make_rule("Confusion", trial);
  EXPECT_THROW(rule->invoke(1), RuleEvaluationConditionMet);
  const Finding& finding = rule->last_finding();
  EXPECT_EQ(finding.tensors, (std::vector<std::string>{"labels", "predictions"}));
  ASSERT_EQ(finding.figures.size(), 9u);
  EXPECT_NEAR(finding.figures[0].value, 5.0 / 6.0, 1e-12);
  EXPECT_EQ(finding.figures[1], (Figure{"class", 0, std::nullopt}));
  EXPECT_NEAR(finding.figures[3].value, 1.0 / 6.0, 1e-12);
  EXPECT_EQ(finding.figures[7], (Figure{"samples", 10, std::nullopt}));
  EXPECT_EQ(finding.figures[8], (Figure{"category_no", 2, std::nullopt}));
  EXPECT_EQ(finding.message,
            "of the samples predicted as class 0 only 5/6 (0.833333) are class 0 < min_diag 0.9; "
            "1/6 (0.166667) of the samples predicted as class 0 are class 1 > max_off_diag 0.1");
}

TEST(ConfusionRule, StaysQuietWithinTheThresholds) {
  TempDir dir;
  const Trial trial = write_predictions(dir);
  const auto rule =
      testing::make_rule("Confusion", trial, {{"min_diag", "0.8"}, {"max_off_diag", "0.2"}});
  const InvokeResult result = invoke_rule(*rule);
  EXPECT_EQ(result.triggered_steps, Steps{});
  EXPECT_EQ(result.steps_evaluated, 3);
}

TEST(ConfusionRule, SaysWhichClassIsBeyondCategoryNo) {
  TempDir dir;
  const Trial trial = write_predictions(dir);
  const auto rule = testing::make_rule("Confusion", trial, {{"category_no", "2"}});
  EXPECT_EQ(invoke_rule(*rule, 0, 2).triggered_steps, Steps{1});
  try {
    rule->invoke(2);
    FAIL() << "class 2 does not fit two categories";
  } catch (const RuleEvaluationConditionMet&) {
    FAIL() << "expected an error, not a finding";
  } catch (const RulestreamError& error) {
    EXPECT_STREQ(error.what(), "Confusion at step 2: class 2 in labels is not below category_no 2");
  }
}

TEST(ConfusionRule, RejectsBadParametersByName) {
  TempDir dir;
  const Trial trial = write_predictions(dir);
  EXPECT_EQ(testing::config_error("Confusion", trial, {{"category_no", "1"}}),
            "rule Confusion: parameter category_no: \"1\" must be at least 2");
  EXPECT_EQ(testing::config_error("Confusion", trial, {{"category_no", "ten"}}),
            "rule Confusion: parameter category_no: \"ten\" is not an integer");
  EXPECT_EQ(testing::config_error("Confusion", trial, {{"min_diag", "2"}}),
            "rule Confusion: parameter min_diag: \"2\" is not a ratio between 0 and 1");
  EXPECT_EQ(testing::config_error("Confusion", trial, {{"category_no", "None"}}), "");
}

}  // namespace
}  // namespace rulestream
