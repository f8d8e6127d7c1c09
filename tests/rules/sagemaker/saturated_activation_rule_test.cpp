// SaturatedActivation on hand-made tanh and sigmoid inputs: each function has its own extremes.
#include <gtest/gtest.h>

#include "rules/rule.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::float_tensor;
using testing::TempDir;
using Steps = std::vector<std::int64_t>;

// Inputs for 2 samples x 4 units.
TensorValue batch(std::vector<float> sample0, std::vector<float> sample1) {
  sample0.insert(sample0.end(), sample1.begin(), sample1.end());
  return float_tensor({2, 4}, sample0);
}

// Step 0: both healthy. Step 1: sigmoid inputs of 10, far beyond tanh's extremes but inside
// sigmoid's (-23, 16.99999): healthy. Step 2: tanh units 0-2 saturated for both samples, unit 3
// for one sample only: 75% saturated. Step 3: sigmoid has -30 and 17 (2 of 4: 50%, not more).
// Step 4: sigmoid -30, 17 and exactly -23 (at the extreme counts as saturated): 75%.
Trial saturating_job(const TempDir& dir) {
  const TensorValue calm = batch({0.5f, -0.5f, 1, -1}, {0.1f, 0.2f, -2, 3});
  const std::vector<testing::JobStep> steps = {
      {.step = 0, .tensors = {{"layer_tanh_input", calm}, {"layer_sigmoid_input", calm}}},
      {.step = 1,
       .tensors = {{"layer_tanh_input", calm},
                   {"layer_sigmoid_input", batch({10, 10, 10, 10}, {10, 10, 10, 10})}}},
      {.step = 2,
       .tensors = {{"layer_tanh_input", batch({10, -10, 9.5f, 20}, {11, -12, 9.6f, 0})},
                   {"layer_sigmoid_input", calm}}},
      {.step = 3,
       .tensors = {{"layer_tanh_input", calm},
                   {"layer_sigmoid_input", batch({-30, 17, 16.9f, 0}, {-30, 17, 16.9f, 0})}}},
      {.step = 4,
       .tensors = {{"layer_tanh_input", calm},
                   {"layer_sigmoid_input", batch({-30, 17, -23, 0}, {-30, 17, -23, 0})}}},
  };
  return testing::write_job(dir.path(), steps,
                            {testing::collection("activations", {"tanh_input"})});
}

TEST(SaturatedActivationRule, FiresWhenMostUnitsSitAtTheirFunctionsExtremes) {
  TempDir dir;
  const Trial trial = saturating_job(dir);
  EXPECT_EQ(testing::fired_steps("SaturatedActivation", trial), (Steps{2, 4}));
  EXPECT_EQ(testing::fired_steps("saturated_activation", trial, {{"threshold_layer", "40"}}),
            (Steps{2, 3, 4}));
  // Collections and regexes are a union: the collection brings the tanh input back.
  EXPECT_EQ(testing::fired_steps("SaturatedActivation", trial,
                                 {{"collection_names", "activations"}, {"tensor_regex", "^none$"}}),
            (Steps{2}));
  // A lower sigmoid maximum saturates the inputs of 10 at step 1 and the 16.9 at step 3.
  EXPECT_EQ(testing::fired_steps("SaturatedActivation", trial, {{"threshold_sigmoid_max", "5"}}),
            (Steps{1, 2, 3, 4}));

  const Finding finding = testing::finding_at("SaturatedActivation", trial, 2);
  EXPECT_EQ(finding.tensors, (std::vector<std::string>{"layer_tanh_input"}));
  EXPECT_EQ(finding.figures, (std::vector<Figure>{{"saturated_percent", 75.0, "layer_tanh_input"},
                                                  {"threshold_layer", 50.0, std::nullopt},
                                                  {"threshold_inactivity", 1.0, std::nullopt}}));
  EXPECT_EQ(finding.message,
            "layer_tanh_input is 75% saturated (3 of 4 tanh units with inputs outside (-9.4999, "
            "9.4999) for more than 99% of 2 samples) > threshold_layer 50%");
}

TEST(SaturatedActivationRule, StaysQuietOnInputsInsideTheRangeAndOnOtherActivations) {
  TempDir dir;
  std::vector<testing::JobStep> steps;
  for (std::int64_t step = 0; step < 4; ++step) {
    steps.push_back({.step = step,
                     .tensors = {{"a_tanh_input", batch({1, -1, 2, -2}, {0, 0, 3, 9})},
                                 {"b_sigmoid_input", batch({16, -22, 0, 1}, {5, 5, 5, 5})},
                                 // Neither tanh nor sigmoid: no extremes to judge it by.
                                 {"c_relu_input", testing::filled({2, 4}, 1e6f)}}});
  }
  const Trial trial = testing::write_job(dir.path(), steps);
  const auto rule = testing::make_rule("SaturatedActivation", trial, {{"tensor_regex", "_input"}});
  const InvokeResult result = invoke_rule(*rule);
  EXPECT_EQ(result.triggered_steps, Steps{});
  EXPECT_EQ(result.steps_evaluated, 4);
}

TEST(SaturatedActivationRule, RejectsBadParametersNamingThem) {
  EXPECT_EQ(testing::config_error("SaturatedActivation", {{"threshold_tanh_max", "-10"}}),
            "rule SaturatedActivation: parameter threshold_tanh_max: \"-10\" must be greater than "
            "threshold_tanh_min");
  const std::string error =
      testing::config_error("SaturatedActivation", {{"threshold_sigmoid_min", "low"}});
  EXPECT_NE(error.find("SaturatedActivation"), std::string::npos) << error;
  EXPECT_NE(error.find("threshold_sigmoid_min"), std::string::npos) << error;
  EXPECT_NE(error.find("\"low\""), std::string::npos) << error;
  EXPECT_EQ(testing::config_error("SaturatedActivation", {{"threshold_layer", "-1"}}),
            "rule SaturatedActivation: parameter threshold_layer: \"-1\" is not a percentage "
            "between 0 and 100");
}

}  // namespace
}  // namespace rulestream
