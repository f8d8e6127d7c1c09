// PoorWeightInitialization on a hand-made job whose first steps show each sign in turn.
#include <gtest/gtest.h>

#include "rules/rule.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::float_tensor;
using testing::TempDir;
using Steps = std::vector<std::int64_t>;

// [x, -x, x, -x]: variance x^2.
TensorValue spread(float x) {
  return float_tensor({4}, {x, -x, x, -x});
}

// 20 gradient values evenly spaced over [-scale, scale]: numpy's 5th and 95th percentiles are
// -0.9 * scale and 0.9 * scale, a range of 1.8 * scale.
TensorValue gradient(float scale) {
  std::vector<float> values;
  for (int i = 0; i < 20; ++i)
    values.push_back(scale * (-1.0f + static_cast<float>(i) * 2.0f / 19));
  return float_tensor({20}, values);
}

struct Signs {
  std::int64_t uneven_variance_step = 2;  // relu2's input variance 16 vs relu1's 1
  std::int64_t narrow_gradient_step = 4;  // percentile range 1.8e-4 < 0.001
  std::int64_t loss_stalls_from = 3;      // loss 10, 9, 8, 7, then 7 for ever
};

// 14 TRAIN steps. Normally relu inputs have variances 1 and 4 (ratio 4), the gradient spans
// 0.018 from its 5th to 95th percentile, and the loss falls by 1 a step.
Trial job(const TempDir& dir, const Signs& signs) {
  std::vector<testing::JobStep> steps;
  for (std::int64_t step = 0; step < 14; ++step) {
    const float loss = 10.0f - static_cast<float>(std::min(step, signs.loss_stalls_from));
    steps.push_back(
        {.step = step,
         .tensors = {
             {"layer1_relu_input_0", spread(1.0f)},
             {"layer2_relu_input_0", spread(step == signs.uneven_variance_step ? 4.0f : 2.0f)},
             {"gradient/fc.weight", gradient(step == signs.narrow_gradient_step ? 1e-4f : 0.01f)},
             {"loss", float_tensor({}, {loss})}}});
  }
  return testing::write_job(
      dir.path(), steps,
      {testing::collection("gradients", {"^gradient"}), testing::collection("losses", {"^loss$"})});
}

TEST(PoorWeightInitializationRule, FiresOnEachSignWithinTheFirstSteps) {
  TempDir dir;
  const Trial trial = job(dir, {});
  // Variance at 2, gradient at 4; the loss's low of 7 (step 3) is not beaten for 5 steps at 8
  // and 9; from step 10 on the rule no longer looks.
  EXPECT_EQ(testing::fired_steps("PoorWeightInitialization", trial), (Steps{2, 4, 8, 9}));
  EXPECT_EQ(testing::fired_steps("poor_weight_initialization", trial, {{"steps", "14"}}),
            (Steps{2, 4, 8, 9, 10, 11, 12, 13}));
  EXPECT_EQ(testing::fired_steps("PoorWeightInitialization", trial, {{"patience", "7"}}),
            (Steps{2, 4}));
  EXPECT_EQ(testing::fired_steps("PoorWeightInitialization", trial, {{"threshold", "20"}}),
            (Steps{4, 8, 9}));
  EXPECT_EQ(
      testing::fired_steps("PoorWeightInitialization", trial, {{"distribution_range", "0.0001"}}),
      (Steps{2, 8, 9}));
  // Without relu inputs to compare, the variance check has nothing to say.
  EXPECT_EQ(testing::fired_steps("PoorWeightInitialization", trial,
                                 {{"activation_inputs_regex", "^none$"}}),
            (Steps{4, 8, 9}));

  const Finding variance = testing::finding_at("PoorWeightInitialization", trial, 2);
  EXPECT_EQ(variance.tensors,
            (std::vector<std::string>{"layer2_relu_input_0", "layer1_relu_input_0"}));
  EXPECT_EQ(variance.figures, (std::vector<Figure>{{"variance", 16.0, "layer2_relu_input_0"},
                                                   {"variance", 1.0, "layer1_relu_input_0"},
                                                   {"variance_ratio", 16.0, std::nullopt},
                                                   {"threshold", 10.0, std::nullopt}}));
  EXPECT_EQ(variance.message,
            "poor initialisation at TRAIN step 2: activation input variance of "
            "layer2_relu_input_0 (16) is 16 times that of layer1_relu_input_0 (1), more than "
            "threshold 10");

  const Finding spread_finding = testing::finding_at("PoorWeightInitialization", trial, 4);
  EXPECT_EQ(spread_finding.tensors, (std::vector<std::string>{"gradient/fc.weight"}));
  ASSERT_EQ(spread_finding.figures.size(), 2u);
  EXPECT_NEAR(spread_finding.figures[0].value, 1.8e-4, 1e-9);
  EXPECT_EQ(spread_finding.message,
            "poor initialisation at TRAIN step 4: gradient gradient/fc.weight spans only 0.00018 "
            "from its 5th to its 95th percentile, less than distribution_range 0.001");

  EXPECT_EQ(testing::finding_at("PoorWeightInitialization", trial, 8).message,
            "poor initialisation at TRAIN step 8: loss loss 7 has not gone below 7 (TRAIN step 3) "
            "for 5 steps, patience 5");
}

TEST(PoorWeightInitializationRule, StaysQuietOnAWellInitialisedJob) {
  TempDir dir;
  const Trial trial =
      job(dir, {.uneven_variance_step = -1, .narrow_gradient_step = -1, .loss_stalls_from = 20});
  const auto rule = testing::make_rule("PoorWeightInitialization", trial, {{"steps", "14"}});
  const InvokeResult result = invoke_rule(*rule);
  EXPECT_EQ(result.triggered_steps, Steps{});
  EXPECT_EQ(result.steps_evaluated, 14);
}

TEST(PoorWeightInitializationRule, RejectsBadParametersNamingThem) {
  EXPECT_EQ(testing::config_error("PoorWeightInitialization", {{"patience", "0"}}),
            "rule PoorWeightInitialization: parameter patience: \"0\" must be at least 1");
  EXPECT_EQ(testing::config_error("PoorWeightInitialization", {{"steps", "-1"}}),
            "rule PoorWeightInitialization: parameter steps: \"-1\" must be positive");
  const std::string error =
      testing::config_error("PoorWeightInitialization", {{"distribution_range", "wide"}});
  EXPECT_NE(error.find("PoorWeightInitialization"), std::string::npos) << error;
  EXPECT_NE(error.find("distribution_range"), std::string::npos) << error;
  EXPECT_NE(error.find("\"wide\""), std::string::npos) << error;
  EXPECT_EQ(testing::config_error("PoorWeightInitialization",
                                  {{"activation_inputs_regex", ".*relu_input|.*ReLU_input"},
                                   {"threshold", "10.0"},
                                   {"distribution_range", "0.001"},
                                   {"patience", "5"},
                                   {"steps", "10"}}),
            "");
}

}  // namespace
}  // namespace rulestream
