// WeightUpdateRatio on hand-made weights whose updates are known: ||update|| / ||weights||.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "rules/rule.hpp"
#include "tests/support/one_rule_replay.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::float_tensor;
using testing::TempDir;
using Steps = std::vector<std::int64_t>;

// fc.weight by global step (TRAIN unless noted); `frozen` is no weight and never changes.
//   step 0 [3, 4]        norm 5
//   step 1 [3.03, 4.04]  ratio 0.05 / 5 = 0.01
//   step 2 [3.03, 4.04]  ratio 0: below small_threshold
//   step 3 EVAL, the same weights: not a training step
//   step 4 [303, 404]    ratio 499.95 / 5.05 = 99: above large_threshold
//   step 5 [306, 408]    ratio 5 / 505 ~ 0.0099
//   step 6 only the loss is saved (TRAIN step 5)
//   step 7 [306, 408]    ratio 0, 2 TRAIN steps after the previous save (TRAIN step 4)
Trial job(const TempDir& dir) {
  const auto weight = [](float a, float b) { return float_tensor({2}, {a, b}); };
  const TensorValue loss = float_tensor({}, {1.0f});
  const std::vector<testing::JobStep> steps = {
      {.step = 0, .tensors = {{"fc.weight", weight(3, 4)}, {"frozen", weight(1, 1)}}},
      {.step = 1, .tensors = {{"fc.weight", weight(3.03f, 4.04f)}, {"frozen", weight(1, 1)}}},
      {.step = 2, .tensors = {{"fc.weight", weight(3.03f, 4.04f)}, {"frozen", weight(1, 1)}}},
      {.step = 3, .mode = Mode::Eval, .tensors = {{"fc.weight", weight(3.03f, 4.04f)}}},
      {.step = 4, .tensors = {{"fc.weight", weight(303, 404)}}},
      {.step = 5, .tensors = {{"fc.weight", weight(306, 408)}}},
      {.step = 6, .tensors = {{"loss", loss}}},
      {.step = 7, .tensors = {{"fc.weight", weight(306, 408)}}},
  };
  return testing::write_job(dir.path(), steps, {testing::collection("weights", {"weight$"})});
}

TEST(WeightUpdateRatioRule, FiresOnUpdatesTooLargeOrTooSmallForTheWeights) {
  TempDir dir;
  const Trial trial = job(dir);
  EXPECT_EQ(testing::fired_steps("WeightUpdateRatio", trial), (Steps{2, 4, 7}));
  EXPECT_EQ(testing::fired_steps("weight_update_ratio", trial, {{"small_threshold", "0"}}),
            (Steps{4}));
  EXPECT_EQ(testing::fired_steps("WeightUpdateRatio", trial, {{"large_threshold", "100"}}),
            (Steps{2, 7}));
  // With num_steps, the previous save must be at most that many TRAIN steps back: step 7's is 2.
  EXPECT_EQ(testing::fired_steps("WeightUpdateRatio", trial, {{"num_steps", "1"}}), (Steps{2, 4}));
  EXPECT_EQ(testing::fired_steps("WeightUpdateRatio", trial, {{"num_steps", "2"}}),
            (Steps{2, 4, 7}));

  const Finding finding = testing::finding_at("WeightUpdateRatio", trial, 4);
  EXPECT_EQ(finding.tensors, (std::vector<std::string>{"fc.weight"}));
  ASSERT_EQ(finding.figures.size(), 6u);
  EXPECT_EQ(finding.figures[0].name, "update_ratio");
  EXPECT_NEAR(finding.figures[0].value, 99.0, 1e-4);
  EXPECT_NEAR(finding.figures[1].value, 499.95, 1e-3);  // update_norm
  EXPECT_NEAR(finding.figures[2].value, 5.05, 1e-5);    // weight_norm
  EXPECT_EQ(finding.figures[3], (Figure{"previous_step", 2.0, "fc.weight"}));
  EXPECT_EQ(finding.figures[4], (Figure{"large_threshold", 10.0, std::nullopt}));
  EXPECT_EQ(finding.figures[5], (Figure{"small_threshold", 1e-8, std::nullopt}));
  EXPECT_EQ(finding.message,
            "fc.weight update ratio 99 (||update|| 499.95 / ||weights|| 5.05 from step 2 to 4) > "
            "large_threshold 10");
  EXPECT_EQ(testing::finding_at("WeightUpdateRatio", trial, 2).message,
            "fc.weight update ratio 0 (||update|| 0 / ||weights|| 5.05 from step 1 to 2) < "
            "small_threshold 1e-08");
}

// The norms over many elements, for lengths that do and do not fill the kernel's lanes and for
// each dtype path (float32 and float64 read in place, others widened first), against the sums
// worked out here element by element.
TEST(WeightUpdateRatioRule, NormsOfLongWeightsOfEveryDtypeMatchTheirDefinition) {
  for (const std::size_t count :
       {std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{13}, std::size_t{1'000}}) {
    std::vector<double> before(count);
    std::vector<double> after(count);
    double update = 0.0;
    double weights = 0.0;
    for (std::size_t i = 0; i < count; ++i) {
      before[i] = static_cast<double>((i * 7) % 23) - 11.0;
      after[i] = before[i] + static_cast<double>(i % 5) - 2.0;
      update += (after[i] - before[i]) * (after[i] - before[i]);
      weights += before[i] * before[i];
    }
    const double ratio = std::sqrt(update) / (std::sqrt(weights) + 1e-9);  // epsilon's default
    const auto tensor = [&](DType dtype, const std::vector<double>& values) {
      const Shape shape{static_cast<std::int64_t>(count)};
      switch (dtype) {
        case DType::Float32:
          return TensorValue::from_values(dtype, shape,
                                          std::vector<float>(values.begin(), values.end()));
        case DType::Float64:
          return TensorValue::from_values(dtype, shape, values);
        default:
          return TensorValue::from_values(dtype, shape,
                                          std::vector<std::int32_t>(values.begin(), values.end()));
      }
    };
    for (const DType dtype : {DType::Float32, DType::Float64, DType::Int32}) {
      TempDir dir;
      const Trial trial =
          testing::write_job(dir.path(),
                             {{.step = 0, .tensors = {{"fc.weight", tensor(dtype, before)}}},
                              {.step = 1, .tensors = {{"fc.weight", tensor(dtype, after)}}}},
                             {testing::collection("weights", {"weight$"})});
      // Any update is "too large" for this threshold: the rule reports its norms.
      const Finding finding = testing::finding_at(
          "WeightUpdateRatio", trial, 1, {{"large_threshold", "1e-300"}, {"small_threshold", "0"}});
      EXPECT_NEAR(finding.figures[0].value, ratio, 1e-9 * ratio);
      ASSERT_EQ(finding.figures.size(), 6u) << count << " " << dtype_name(dtype);
      EXPECT_NEAR(finding.figures[1].value, std::sqrt(update), 1e-9 * std::sqrt(update))
          << count << " " << dtype_name(dtype);
      EXPECT_NEAR(finding.figures[2].value, std::sqrt(weights), 1e-9 * std::sqrt(weights))
          << count << " " << dtype_name(dtype);
    }
  }
}

TEST(WeightUpdateRatioRule, StaysQuietWhileWeightsMoveByAPercentAStep) {
  TempDir dir;
  std::vector<testing::JobStep> steps;
  float scale = 1.0f;
  for (std::int64_t step = 0; step < 8; ++step) {
    steps.push_back(
        {.step = step, .tensors = {{"fc.weight", float_tensor({2}, {3 * scale, 4 * scale})}}});
    scale *= 1.01f;
  }
  const Trial trial =
      testing::write_job(dir.path(), steps, {testing::collection("weights", {"weight$"})});
  const auto rule = testing::make_rule("WeightUpdateRatio", trial);
  const InvokeResult result = invoke_rule(*rule);
  EXPECT_EQ(result.triggered_steps, Steps{});
  EXPECT_EQ(result.steps_evaluated, 8);
}

// A weight that cannot be read at a step (a record spoiled on disk) is an error at that step.
// Weights are read 256 at a time, in name order, as one thread reading one batch after another
// would: the batches before the failing one record the step as saved, the rest do not, at any
// thread count. 300 weights of which w000 and w299 never change (ratio 0, below
// small_threshold) and the others move by 1% a step; w280 cannot be read at step 3.
TEST(WeightUpdateRatioRule, AWeightThatCannotBeReadIsAnErrorAtItsStep) {
  TempDir dir;
  constexpr int kWeights = 300;
  const auto name = [](int k) {
    const std::string digits = std::to_string(k);
    return "w" + std::string(3 - digits.size(), '0') + digits;
  };
  std::vector<testing::JobStep> steps;
  for (std::int64_t step = 0; step < 6; ++step) {
    testing::JobStep saved{.step = step};
    for (int k = 0; k < kWeights; ++k) {
      const bool frozen = k == 0 || k == kWeights - 1;
      const double scale = frozen ? 1.0 : 1.0 + 0.01 * static_cast<double>(step);
      saved.tensors.emplace_back(name(k), float_tensor({}, {static_cast<float>((k + 1) * scale)}));
    }
    steps.push_back(std::move(saved));
  }
  const Trial trial =
      testing::write_job(dir.path(), steps, {testing::collection("weights", {"^w"})});
  testing::corrupt_saved_record(dir.path(), 3, "w280");
  ASSERT_FALSE(HasFatalFailure());

  const auto rule = testing::make_rule("WeightUpdateRatio", trial);
  const std::vector<std::string> outcomes = testing::step_outcomes(*rule, 0, 4);
  ASSERT_EQ(outcomes.size(), 5u);
  EXPECT_EQ(outcomes, (std::vector<std::string>{"quiet", "fired: w000 w299", "fired: w000 w299",
                                                outcomes[3], "fired: w000 w299"}));
  EXPECT_EQ(outcomes[3].rfind("error: ", 0), 0u) << outcomes[3];
  EXPECT_NE(outcomes[3].find("(tensor 'w280')"), std::string::npos) << outcomes[3];
  // At step 4 the first batch's w000 measures from step 3; w299, in the batch that could not be
  // read, from step 2.
  const std::vector<Figure>& figures = rule->last_finding().figures;
  EXPECT_NE(std::find(figures.begin(), figures.end(), Figure{"previous_step", 3.0, "w000"}),
            figures.end());
  EXPECT_NE(std::find(figures.begin(), figures.end(), Figure{"previous_step", 2.0, "w299"}),
            figures.end());
  EXPECT_EQ(testing::step_outcomes(*rule, 5, 5), std::vector<std::string>{"fired: w000 w299"});

  // A pipeline counts step 3 as unreadable and goes on, with the same findings however many
  // threads it runs on.
  for (const int threads : {1, 4}) {
    const testing::OneRuleReplay replay =
        testing::replay_builtin_rule(dir.path(), threads, "WeightUpdateRatio");
    EXPECT_EQ(
        testing::fired_tensors_by_step(replay.events),
        (std::vector<std::string>{"1: w000 w299", "2: w000 w299", "4: w000 w299", "5: w000 w299"}))
        << threads << " threads";
    ASSERT_GE(replay.events.size(), 3u);
    const auto& at_four = replay.events[2].figures;
    EXPECT_NE(std::find(at_four.begin(), at_four.end(), Figure{"previous_step", 2.0, "w299"}),
              at_four.end())
        << threads << " threads";
    const RuleEvent& status = replay.events.back();
    EXPECT_EQ(status.status, RuleStatus::IssuesFound) << threads << " threads";
    EXPECT_EQ(status.steps_evaluated, 5) << threads << " threads";
    EXPECT_NE(status.message.find("could not read its data at 1 of 6 steps (first, step 3: "),
              std::string::npos)
        << status.message;
    EXPECT_NE(status.message.find("(tensor 'w280')"), std::string::npos) << status.message;
  }
}

TEST(WeightUpdateRatioRule, RejectsBadParametersNamingThem) {
  EXPECT_EQ(testing::config_error("WeightUpdateRatio", {{"num_steps", "0"}}),
            "rule WeightUpdateRatio: parameter num_steps: \"0\" must be at least 1");
  const std::string error = testing::config_error("WeightUpdateRatio", {{"epsilon", "tiny"}});
  EXPECT_NE(error.find("WeightUpdateRatio"), std::string::npos) << error;
  EXPECT_NE(error.find("epsilon"), std::string::npos) << error;
  EXPECT_NE(error.find("\"tiny\""), std::string::npos) << error;
  EXPECT_EQ(testing::config_error("WeightUpdateRatio", {{"large_threshold", "1e-9"}}),
            "rule WeightUpdateRatio: parameter large_threshold: \"1e-9\" must be greater than "
            "small_threshold \"1e-08\"");
  EXPECT_EQ(testing::config_error("WeightUpdateRatio", {{"num_steps", "100"},
                                                        {"large_threshold", "10.0"},
                                                        {"small_threshold", "0.00000001"},
                                                        {"epsilon", "0.000000001"}}),
            "");
}

// smdebug's own samples: with learning rate 0 the weights (saved every 3 steps) never move, so
// every save after the first has ratio 0; the healthy MLP's updates stay within the thresholds,
// and its EVAL steps, which save the same weights again, are not compared.
TEST(WeightUpdateRatioRule, FiresOnSmdebugsLearningRateZeroSampleAndNotOnTheHealthyOne) {
  const auto samples = testing::samples_dir();
  if (!samples) GTEST_SKIP() << "smdebug-samples not found (set RULESTREAM_SAMPLES)";
  Steps every_third;
  for (std::int64_t step = 3; step < 60; step += 3) every_third.push_back(step);
  const Trial plateau = Trial::open((*samples / "trials" / "pt-lr0-plateau").string());
  EXPECT_EQ(testing::fired_steps("WeightUpdateRatio", plateau), every_third);

  const Trial healthy = Trial::open((*samples / "trials" / "pt-mlp-basic").string());
  EXPECT_EQ(testing::fired_steps("WeightUpdateRatio", healthy), Steps{});
}

}  // namespace
}  // namespace rulestream
