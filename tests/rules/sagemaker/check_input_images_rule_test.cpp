// CheckInputImages on hand-made image batches whose per-channel means are known.
#include <gtest/gtest.h>

#include "core/model/exceptions.hpp"
#include "rules/rule.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::float_tensor;
using testing::TempDir;
using Steps = std::vector<std::int64_t>;

constexpr const char* kInput = "hybridsequential0_input_0";

// Two 2x2 images in NCHW: channels 0 and 1 alternate +-1 (mean 0), channel 2 is 0.3 everywhere
// (`offset`). The whole tensor's mean is only 0.1: the rule must look per channel.
TensorValue nchw_batch(float offset) {
  std::vector<float> values;
  for (int image = 0; image < 2; ++image) {
    for (const float pixel : {1.0f, -1.0f, 1.0f, -1.0f}) values.push_back(pixel);
    for (const float pixel : {-1.0f, 1.0f, -1.0f, 1.0f}) values.push_back(pixel);
    for (int pixel = 0; pixel < 4; ++pixel) values.push_back(offset);
  }
  return float_tensor({2, 3, 2, 2}, values);
}

// The same images in NHWC.
TensorValue nhwc_batch(float offset) {
  std::vector<float> values;
  for (int image = 0; image < 2; ++image) {
    for (int pixel = 0; pixel < 4; ++pixel) {
      const float sign = pixel % 2 == 0 ? 1.0f : -1.0f;
      values.insert(values.end(), {sign, -sign, offset});
    }
  }
  return float_tensor({2, 2, 2, 3}, values);
}

// Five steps of two images each: 2, 4, 6, 8, 10 images seen after steps 0..4.
Trial job(const TempDir& dir, float offset) {
  std::vector<testing::JobStep> steps;
  for (std::int64_t step = 0; step < 5; ++step) {
    steps.push_back(
        {.step = step,
         .tensors = {{kInput, nchw_batch(offset)}, {"nhwc_input", nhwc_batch(offset)}}});
  }
  return testing::write_job(dir.path(), steps);
}

TEST(CheckInputImagesRule, FiresOnceEnoughImagesShowAChannelMeanFarFromZero) {
  TempDir dir;
  const Trial trial = job(dir, 0.3f);
  // 500 images by default: ten are too few to judge.
  EXPECT_EQ(testing::fired_steps("CheckInputImages", trial), Steps{});
  EXPECT_EQ(testing::fired_steps("check_input_images", trial, {{"threshold_samples", "5"}}),
            (Steps{2, 3, 4}));
  EXPECT_EQ(testing::fired_steps("CheckInputImages", trial,
                                 {{"threshold_samples", "5"}, {"threshold_mean", "0.35"}}),
            Steps{});
  // NHWC: the channel is the last axis. Taken along axis 1 (image rows) every mean is 0.1.
  EXPECT_EQ(
      testing::fired_steps("CheckInputImages", trial,
                           {{"threshold_samples", "2"}, {"regex", "nhwc"}, {"channel", "-1"}}),
      (Steps{0, 1, 2, 3, 4}));
  EXPECT_EQ(testing::fired_steps("CheckInputImages", trial,
                                 {{"threshold_samples", "2"}, {"regex", "nhwc"}, {"channel", "1"}}),
            Steps{});

  const Finding finding =
      testing::finding_at("CheckInputImages", trial, 2, {{"threshold_samples", "5"}});
  EXPECT_EQ(finding.tensors, (std::vector<std::string>{kInput}));
  ASSERT_EQ(finding.figures.size(), 4u);
  EXPECT_EQ(finding.figures[0].name, "channel_mean");
  EXPECT_NEAR(finding.figures[0].value, 0.3, 1e-7);
  EXPECT_EQ(finding.figures[1], (Figure{"channel", 2.0, kInput}));
  EXPECT_EQ(finding.figures[2], (Figure{"images", 6.0, kInput}));
  EXPECT_EQ(finding.figures[3], (Figure{"threshold_mean", 0.2, std::nullopt}));
  EXPECT_EQ(finding.message,
            "hybridsequential0_input_0 channel 2 has mean 0.3 over 6 images, further from 0 than "
            "threshold_mean 0.2: inputs are not normalised");
}

TEST(CheckInputImagesRule, StaysQuietOnNormalisedImages) {
  TempDir dir;
  const Trial trial = job(dir, 0.0f);
  const auto rule = testing::make_rule("CheckInputImages", trial, {{"threshold_samples", "1"}});
  const InvokeResult result = invoke_rule(*rule);
  EXPECT_EQ(result.triggered_steps, Steps{});
  EXPECT_EQ(result.steps_evaluated, 5);
}

TEST(CheckInputImagesRule, NamesTheTensorWithoutTheChannelAxis) {
  TempDir dir;
  const Trial trial = job(dir, 0.3f);
  const auto rule = testing::make_rule("CheckInputImages", trial, {{"channel", "4"}});
  try {
    rule->invoke(0);
    FAIL() << "a rank-4 tensor has no axis 4";
  } catch (const RuleEvaluationConditionMet&) {
    FAIL() << "a rank-4 tensor has no axis 4";
  } catch (const RulestreamError& error) {
    EXPECT_EQ(std::string(error.what()),
              "rule CheckInputImages: tensor hybridsequential0_input_0 at step 0 has shape [2, 3, "
              "2, 2], which has no channel axis 4");
  }
}

TEST(CheckInputImagesRule, RejectsBadParametersNamingThem) {
  EXPECT_EQ(testing::config_error("CheckInputImages", {{"threshold_samples", "0"}}),
            "rule CheckInputImages: parameter threshold_samples: \"0\" must be at least 1");
  const std::string error = testing::config_error("CheckInputImages", {{"channel", "last"}});
  EXPECT_NE(error.find("CheckInputImages"), std::string::npos) << error;
  EXPECT_NE(error.find("channel"), std::string::npos) << error;
  EXPECT_NE(error.find("\"last\""), std::string::npos) << error;
  EXPECT_EQ(testing::config_error("CheckInputImages", {{"threshold_mean", "0.2"},
                                                       {"threshold_samples", "500"},
                                                       {"regex", ".*hybridsequential0_input_0"},
                                                       {"channel", "1"}}),
            "");
}

}  // namespace
}  // namespace rulestream
