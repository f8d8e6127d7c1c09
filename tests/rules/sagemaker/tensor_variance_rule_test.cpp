// TensorVariance on hand-made tensors whose variance is exactly known.
#include <gtest/gtest.h>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::float_tensor;
using testing::TempDir;
using Steps = std::vector<std::int64_t>;

// [x, -x, x, -x] has mean 0 and (population) variance x^2.
TensorValue spread(float x) {
  return float_tensor({4}, {x, -x, x, -x});
}

// w1 has variance 1 except 100 at step 3 and 1e-6 at step 4; w2 always 4; the scalar loss
// (variance 0 by definition) is no spread and is skipped.
Trial job(const TempDir& dir) {
  std::vector<testing::JobStep> steps;
  for (std::int64_t step = 0; step < 6; ++step) {
    const float x = step == 3 ? 10.0f : step == 4 ? 0.001f : 1.0f;
    steps.push_back(
        {.step = step,
         .tensors = {{"w1", spread(x)}, {"w2", spread(2.0f)}, {"loss", float_tensor({}, {0.5f})}}});
  }
  return testing::write_job(
      dir.path(), steps,
      {testing::collection("weights", {"^w"}), testing::collection("losses", {"^loss$"})});
}

TEST(TensorVarianceRule, FiresOnVariancesOutsideTheThresholds) {
  TempDir dir;
  const Trial trial = job(dir);
  const RuleParameters both{
      {"collection_names", "weights"}, {"max_threshold", "10"}, {"min_threshold", "0.01"}};
  EXPECT_EQ(testing::fired_steps("TensorVariance", trial, both), (Steps{3, 4}));
  EXPECT_EQ(testing::fired_steps("tensor_variance", trial, {{"max_threshold", "10"}}), (Steps{3}));
  EXPECT_EQ(testing::fired_steps("TensorVariance", trial, {{"min_threshold", "0.01"}}), (Steps{4}));
  // w2's variance of 4 is above 3 everywhere; the loss is never judged.
  EXPECT_EQ(testing::fired_steps("TensorVariance", trial,
                                 {{"tensor_regex", "w2|loss"}, {"max_threshold", "3"}}),
            (Steps{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(testing::fired_steps("TensorVariance", trial,
                                 {{"collection_names", "losses"}, {"min_threshold", "1"}}),
            Steps{});

  const Finding finding = testing::finding_at("TensorVariance", trial, 3, both);
  EXPECT_EQ(finding.tensors, (std::vector<std::string>{"w1"}));
  EXPECT_EQ(finding.figures, (std::vector<Figure>{{"variance", 100.0, "w1"},
                                                  {"max_threshold", 10.0, std::nullopt},
                                                  {"min_threshold", 0.01, std::nullopt}}));
  EXPECT_EQ(finding.message, "w1 variance 100 > max_threshold 10");
  EXPECT_EQ(testing::finding_at("TensorVariance", trial, 4, both).message.substr(0, 12),
            "w1 variance ");
}

TEST(TensorVarianceRule, StaysQuietWithinTheThresholds) {
  TempDir dir;
  const Trial trial = job(dir);
  const auto rule = testing::make_rule("TensorVariance", trial,
                                       {{"max_threshold", "1000"}, {"min_threshold", "1e-9"}});
  const InvokeResult result = invoke_rule(*rule);
  EXPECT_EQ(result.triggered_steps, Steps{});
  EXPECT_EQ(result.steps_evaluated, 6);
}

TEST(TensorVarianceRule, RejectsBadParametersNamingThem) {
  const std::string neither = testing::config_error("TensorVariance", {});
  EXPECT_EQ(neither,
            "rule TensorVariance: parameters max_threshold and min_threshold are both None: set "
            "at least one, or the rule can never fire");
  EXPECT_EQ(
      testing::config_error("TensorVariance", {{"max_threshold", "None"}, {"min_threshold", ""}}),
      neither);
  const std::string bad = testing::config_error("TensorVariance", {{"max_threshold", "huge"}});
  EXPECT_NE(bad.find("TensorVariance"), std::string::npos) << bad;
  EXPECT_NE(bad.find("max_threshold"), std::string::npos) << bad;
  EXPECT_NE(bad.find("\"huge\""), std::string::npos) << bad;
  EXPECT_EQ(
      testing::config_error("TensorVariance", {{"max_threshold", "1"}, {"min_threshold", "2"}}),
      "rule TensorVariance: parameter min_threshold: \"2\" is above max_threshold \"1\"");
}

}  // namespace
}  // namespace rulestream
