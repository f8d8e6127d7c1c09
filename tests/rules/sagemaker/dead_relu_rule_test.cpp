// DeadRelu on hand-made ReLU outputs: which layers have too many units that never fire.
#include <gtest/gtest.h>

#include "rules/rule.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::float_tensor;
using testing::TempDir;
using Steps = std::vector<std::int64_t>;

// A batch of 4 samples x 4 ReLUs where each ReLU fires (> 0) for exactly one sample: every unit
// is active for 25% of the batch.
TensorValue healthy_relu() {
  return float_tensor({4, 4}, {2, 0, 0, 0,  //
                               0, 3, 0, 0,  //
                               0, 0, 1, 0,  //
                               0, 0, 0, 5});
}

// The first `dead` units output 0 for every sample; the others fire for one sample each.
TensorValue relu_with_dead_units(int dead) {
  std::vector<float> values(16, 0.0f);
  for (int unit = dead; unit < 4; ++unit) values[static_cast<std::size_t>(unit * 4 + unit)] = 1.0f;
  return float_tensor({4, 4}, values);
}

// Steps 0-2 healthy; at 3 half of layer1's ReLUs are dead (not more than 50%: quiet); at 4 and 5
// three of four are. layer2 stays healthy; `dense_output` is all zeros but is no ReLU output.
Trial dying_job(const TempDir& dir) {
  std::vector<testing::JobStep> steps;
  for (std::int64_t step = 0; step < 6; ++step) {
    const int dead = step < 3 ? 0 : step == 3 ? 2 : 3;
    steps.push_back({.step = step,
                     .tensors = {{"layer1_relu_output_0", relu_with_dead_units(dead)},
                                 {"layer2_relu_output_0", healthy_relu()},
                                 {"dense_output", testing::filled({4, 4}, 0.0f)}}});
  }
  return testing::write_job(dir.path(), steps);
}

TEST(DeadReluRule, FiresWhenMoreThanHalfOfALayersRelusAreDead) {
  TempDir dir;
  const Trial trial = dying_job(dir);
  EXPECT_EQ(testing::fired_steps("DeadRelu", trial), (Steps{4, 5}));
  EXPECT_EQ(testing::fired_steps("dead_relu", trial, {{"threshold_layer", "25"}}),
            (Steps{3, 4, 5}));
  // A unit active for 25% of the samples is dead when activity must reach 30%: every unit of
  // both layers is then dead at every step.
  EXPECT_EQ(testing::fired_steps("DeadRelu", trial, {{"threshold_inactivity", "30"}}),
            (Steps{0, 1, 2, 3, 4, 5}));
  // Selecting the all-zero tensor that is no ReLU output makes it count.
  EXPECT_EQ(testing::fired_steps("DeadRelu", trial, {{"tensor_regex", "dense_output"}}),
            (Steps{0, 1, 2, 3, 4, 5}));

  const Finding finding = testing::finding_at("DeadRelu", trial, 4);
  EXPECT_EQ(finding.tensors, (std::vector<std::string>{"layer1_relu_output_0"}));
  EXPECT_EQ(finding.figures, (std::vector<Figure>{{"dead_percent", 75.0, "layer1_relu_output_0"},
                                                  {"threshold_layer", 50.0, std::nullopt},
                                                  {"threshold_inactivity", 1.0, std::nullopt}}));
  EXPECT_EQ(finding.message,
            "layer1_relu_output_0 has 75% dead ReLUs (3 of 4 ReLUs active for less than 1% of "
            "4 samples) > threshold_layer 50%");
}

TEST(DeadReluRule, StaysQuietWhileEveryReluFiresForSomeSample) {
  TempDir dir;
  std::vector<testing::JobStep> steps;
  for (std::int64_t step = 0; step < 5; ++step) {
    steps.push_back({.step = step,
                     .tensors = {{"layer1_relu_output_0", healthy_relu()},
                                 {"layer1_relu_input_0", testing::filled({4, 4}, -1.0f)}}});
  }
  const Trial trial = testing::write_job(dir.path(), steps);
  const auto rule = testing::make_rule("DeadRelu", trial);
  const InvokeResult result = invoke_rule(*rule);
  EXPECT_EQ(result.triggered_steps, Steps{});
  EXPECT_EQ(result.steps_evaluated, 5);
}

TEST(DeadReluRule, RejectsBadParametersNamingThem) {
  const std::string not_a_number = testing::config_error("DeadRelu", {{"threshold_layer", "half"}});
  EXPECT_NE(not_a_number.find("DeadRelu"), std::string::npos) << not_a_number;
  EXPECT_NE(not_a_number.find("threshold_layer"), std::string::npos) << not_a_number;
  EXPECT_NE(not_a_number.find("\"half\""), std::string::npos) << not_a_number;

  EXPECT_EQ(testing::config_error("DeadRelu", {{"threshold_inactivity", "101"}}),
            "rule DeadRelu: parameter threshold_inactivity: \"101\" is not a percentage between 0 "
            "and 100");
  const std::string bad_regex = testing::config_error("DeadRelu", {{"tensor_regex", "relu("}});
  EXPECT_NE(bad_regex.find("tensor_regex: \"relu(\""), std::string::npos) << bad_regex;
  // The document gives DeadRelu no collection_names.
  const std::string unknown = testing::config_error("DeadRelu", {{"collection_names", "relu"}});
  EXPECT_NE(unknown.find("unknown parameter \"collection_names\""), std::string::npos) << unknown;
  EXPECT_EQ(testing::config_error("DeadRelu", {{"threshold_inactivity", "1.0"},
                                               {"threshold_layer", "50.0"},
                                               {"tensor_regex", ".*relu_output|.*ReLU_output"}}),
            "");
}

}  // namespace
}  // namespace rulestream
