// FeatureImportanceOverweight on feature importances named as smdebug's XGBoost hook saves them
// (feature_importance/<type>/<feature>, one normalised scalar per feature).
#include <gtest/gtest.h>

#include "rules/rule.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/series_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::scalar;
using testing::SeriesStep;
using testing::Steps;
using testing::TempDir;

// Five features per step for the importance types "weight" and "gain".
SeriesStep importances(const std::vector<double>& weight, const std::vector<double>& gain) {
  SeriesStep step;
  for (std::size_t f = 0; f < weight.size(); ++f) {
    step.tensors.push_back({"feature_importance/weight/f" + std::to_string(f), scalar(weight[f])});
    step.tensors.push_back({"feature_importance/gain/f" + std::to_string(f), scalar(gain[f])});
  }
  return step;
}

// By weight: step 0 spreads evenly (top 3 hold 0.6), step 1 concentrates (0.5 + 0.2 + 0.15 =
// 0.85 > 0.8), step 2 holds 0.75. By gain one feature holds 0.9 at every step.
Trial write_importances(const TempDir& dir) {
  const std::vector<double> gain{0.9, 0.05, 0.02, 0.02, 0.01};
  return testing::write_job(dir.path() / "xgb", {importances({0.2, 0.2, 0.2, 0.2, 0.2}, gain),
                                                 importances({0.5, 0.2, 0.15, 0.1, 0.05}, gain),
                                                 importances({0.3, 0.25, 0.2, 0.15, 0.1}, gain)});
}

TEST(FeatureImportanceOverweightRule, FiresWhenTheTopFeaturesHoldMoreThanTheThreshold) {
  TempDir dir;
  const Trial trial = write_importances(dir);
  EXPECT_EQ(testing::fired_steps("FeatureImportanceOverweight", trial), Steps{1});
  EXPECT_EQ(testing::fired_steps("feature_importance_overweight", trial,
                                 {{"tensor_regex", ".*feature_importance/gain"}}),
            (Steps{0, 1, 2}));
  // The two largest at step 1 hold 0.7; at step 2, 0.55.
  EXPECT_EQ(testing::fired_steps("FeatureImportanceOverweight", trial,
                                 {{"nfeatures", "2"}, {"threshold", "0.6"}}),
            Steps{1});

  const auto rule = testing::make_rule("FeatureImportanceOverweight", trial);
  EXPECT_THROW(rule->invoke(1), RuleEvaluationConditionMet);
  const Finding& finding = rule->last_finding();
  EXPECT_EQ(finding.tensors, (std::vector<std::string>{"feature_importance/weight/f0",
                                                       "feature_importance/weight/f1",
                                                       "feature_importance/weight/f2"}));
  ASSERT_EQ(finding.figures.size(), 6u);
  EXPECT_EQ(finding.figures[0], (Figure{"importance", 0.5, "feature_importance/weight/f0"}));
  EXPECT_EQ(finding.figures[3].name, "top_share");
  EXPECT_NEAR(finding.figures[3].value, 0.85, 1e-12);
  EXPECT_EQ(finding.figures[4], (Figure{"threshold", 0.8, std::nullopt}));
  EXPECT_EQ(finding.figures[5], (Figure{"features", 5, std::nullopt}));
  EXPECT_EQ(finding.message,
            "the 3 most important of 5 features hold 85% of the importance > threshold 80% "
            "(largest: feature_importance/weight/f0 0.5)");
}

TEST(FeatureImportanceOverweightRule, StaysQuietBelowTheThresholdOrWithTooFewFeatures) {
  TempDir dir;
  const Trial trial = write_importances(dir);
  EXPECT_EQ(testing::fired_steps("FeatureImportanceOverweight", trial, {{"threshold", "0.9"}}),
            Steps{});
  // Five features and nfeatures 5: the top five hold everything by definition.
  EXPECT_EQ(
      testing::fired_steps("FeatureImportanceOverweight", trial,
                           {{"tensor_regex", ".*feature_importance/gain"}, {"nfeatures", "5"}}),
      Steps{});
  const auto rule = testing::make_rule("FeatureImportanceOverweight", trial);
  EXPECT_EQ(invoke_rule(*rule).steps_evaluated, 3);
}

TEST(FeatureImportanceOverweightRule, RejectsBadParametersByName) {
  TempDir dir;
  const Trial trial = write_importances(dir);
  EXPECT_EQ(testing::config_error("FeatureImportanceOverweight", trial, {{"nfeatures", "0"}}),
            "rule FeatureImportanceOverweight: parameter nfeatures: \"0\" must be at least 1");
  EXPECT_EQ(testing::config_error("FeatureImportanceOverweight", trial, {{"threshold", "most"}}),
            "rule FeatureImportanceOverweight: parameter threshold: \"most\" is not a number");
  EXPECT_EQ(testing::config_error("FeatureImportanceOverweight", trial, {{"threshold", "1.5"}}),
            "rule FeatureImportanceOverweight: parameter threshold: \"1.5\" is not a share "
            "between 0 and 1");
  EXPECT_NE(testing::config_error("FeatureImportanceOverweight", trial, {{"n_features", "3"}})
                .find("unknown parameter \"n_features\""),
            std::string::npos);
}

}  // namespace
}  // namespace rulestream
