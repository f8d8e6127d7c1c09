// UnchangedTensor on a hand-made loss that stalls, and on smdebug's own lr=0 sample.
#include <gtest/gtest.h>

#include <limits>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "tests/support/one_rule_replay.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/test_support.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream {
namespace {

using testing::float_tensor;
using testing::TempDir;
using Steps = std::vector<std::int64_t>;

// The loss by global step; step 8 is an EVAL step. `w` moves at every TRAIN step.
//   step  0    1    2    3    4    5    6    7    8(EVAL) 9    10
//   loss  3    2    1    1    1    1    0.5  0.5  0.5     0.5  0.500004
Trial stalling_job(const TempDir& dir) {
  const std::vector<float> losses = {3, 2, 1, 1, 1, 1, 0.5f, 0.5f, 0.5f, 0.5f, 0.500004f};
  std::vector<testing::JobStep> steps;
  for (std::int64_t step = 0; step < 11; ++step) {
    const auto s = static_cast<float>(step);
    steps.push_back(
        {.step = step,
         .mode = step == 8 ? Mode::Eval : Mode::Train,
         .tensors = {{"loss", float_tensor({}, {losses[static_cast<std::size_t>(step)]})},
                     {"w", float_tensor({2}, {s, -s})}}});
  }
  return testing::write_job(dir.path(), steps, {testing::collection("losses", {"^loss$"})});
}

TEST(UnchangedTensorRule, FiresWhenTheLastNumStepsSavesAreClose) {
  TempDir dir;
  const Trial trial = stalling_job(dir);
  // Saves 2,3,4 and 3,4,5 are all 1; 6,7,9 (8 is EVAL, not a training step) are 0.5, and
  // 0.500004 at 10 is within rtol 1e-5 of 0.5. The EVAL step itself never fires.
  EXPECT_EQ(testing::fired_steps("UnchangedTensor", trial), (Steps{4, 5, 9, 10}));
  EXPECT_EQ(testing::fired_steps("unchanged_tensor", trial, {{"collection_names", "losses"}}),
            (Steps{4, 5, 9, 10}));
  EXPECT_EQ(testing::fired_steps("UnchangedTensor", trial, {{"tensor_regex", "^w$"}}), Steps{});
  EXPECT_EQ(testing::fired_steps("UnchangedTensor", trial, {{"rtol", "1e-6"}}), (Steps{4, 5, 9}));
  EXPECT_EQ(testing::fired_steps("UnchangedTensor", trial, {{"num_steps", "2"}}),
            (Steps{3, 4, 5, 7, 9, 10}));
  EXPECT_EQ(testing::fired_steps("UnchangedTensor", trial, {{"num_steps", "4"}}), (Steps{5, 10}));

  const Finding finding = testing::finding_at("UnchangedTensor", trial, 9);
  EXPECT_EQ(finding.tensors, (std::vector<std::string>{"loss"}));
  EXPECT_EQ(finding.figures, (std::vector<Figure>{{"max_abs_difference", 0.0, "loss"},
                                                  {"since_step", 6.0, "loss"},
                                                  {"num_steps", 3.0, std::nullopt},
                                                  {"rtol", 1e-5, std::nullopt},
                                                  {"atol", 1e-8, std::nullopt}}));
  EXPECT_EQ(finding.message,
            "loss unchanged over saved steps 6..9 (3 saves, largest difference 0 within rtol "
            "1e-05, atol 1e-08)");
}

// A rule invoked step after step compares with the screens it kept from earlier steps; one
// invoked at a single step reads them from the trial. Both reach the same verdicts.
TEST(UnchangedTensorRule, AVerdictIsTheSameWhetherEarlierStepsWereInvokedOrNot) {
  TempDir dir;
  const Trial trial = stalling_job(dir);
  for (const std::string num_steps : {"2", "3", "4"}) {
    const RuleParameters parameters{{"num_steps", num_steps}};
    Steps alone;
    for (std::int64_t step = 0; step <= 10; ++step) {
      const auto rule = testing::make_rule("UnchangedTensor", trial, parameters);
      try {
        rule->invoke(step);
      } catch (const RuleEvaluationConditionMet&) {
        alone.push_back(step);
      }
    }
    EXPECT_EQ(alone, testing::fired_steps("UnchangedTensor", trial, parameters))
        << "num_steps " << num_steps;
    EXPECT_FALSE(alone.empty());
  }
}

TEST(UnchangedTensorRule, ComparesNanOnlyWithEqualNan) {
  TempDir dir;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<testing::JobStep> steps;
  for (std::int64_t step = 0; step < 4; ++step) {
    steps.push_back({.step = step, .tensors = {{"n", float_tensor({2}, {nan, 1.0f})}}});
  }
  const Trial trial = testing::write_job(dir.path(), steps);
  EXPECT_EQ(testing::fired_steps("UnchangedTensor", trial), Steps{});
  EXPECT_EQ(testing::fired_steps("UnchangedTensor", trial, {{"equal_nan", "True"}}), (Steps{2, 3}));
}

TEST(UnchangedTensorRule, StaysQuietWhileTensorsMove) {
  TempDir dir;
  std::vector<testing::JobStep> steps;
  for (std::int64_t step = 0; step < 6; ++step) {
    const auto s = static_cast<float>(step);
    steps.push_back({.step = step,
                     .tensors = {{"loss", float_tensor({}, {3.0f - 0.1f * s})},
                                 {"w", float_tensor({2}, {1.0f + s, 2.0f})}}});
  }
  const Trial trial = testing::write_job(dir.path(), steps);
  const auto rule = testing::make_rule("UnchangedTensor", trial);
  const InvokeResult result = invoke_rule(*rule);
  EXPECT_EQ(result.triggered_steps, Steps{});
  EXPECT_EQ(result.steps_evaluated, 6);
}

// A tensor that cannot be read at a step (a record spoiled on disk) is an error at that step
// naming the first such tensor in name order, and costs the others nothing: each still records
// the step as saved. c changes only at step 3, where b and d cannot be read; had c not recorded
// step 3, its saves 1, 2, 4 (all 1) would call it unchanged at step 4.
//   step  0  1  2  3  4  5  6  7
//   a     0  1  2  3  4  5  6  7      moves
//   b     1  1  1  .  1  1  1  1      unreadable at 3
//   c     1  1  1  2  1  1  1  1
//   d     0 -1 -2  .  ...             moves; unreadable at 3
TEST(UnchangedTensorRule, ATensorThatCannotBeReadIsAnErrorAtItsStepAndTheOthersMoveOn) {
  TempDir dir;
  std::vector<testing::JobStep> steps;
  for (std::int64_t step = 0; step < 8; ++step) {
    const auto s = static_cast<float>(step);
    steps.push_back({.step = step,
                     .tensors = {{"a", float_tensor({}, {s})},
                                 {"b", float_tensor({}, {1.0f})},
                                 {"c", float_tensor({}, {step == 3 ? 2.0f : 1.0f})},
                                 {"d", float_tensor({}, {-s})}}});
  }
  const Trial trial = testing::write_job(dir.path(), steps);
  testing::corrupt_saved_record(dir.path(), 3, "d");
  testing::corrupt_saved_record(dir.path(), 3, "b");
  ASSERT_FALSE(HasFatalFailure());

  const auto rule = testing::make_rule("UnchangedTensor", trial);
  const std::vector<std::string> outcomes = testing::step_outcomes(*rule, 0, 7);
  ASSERT_EQ(outcomes.size(), 8u);
  // b keeps the saves it could read (1, 2, then 4): unchanged at 4 and 5 as at 6 and 7.
  EXPECT_EQ(outcomes,
            (std::vector<std::string>{"quiet", "quiet", "fired: b c", outcomes[3], "fired: b",
                                      "fired: b", "fired: b c", "fired: b c"}));
  EXPECT_EQ(outcomes[3].rfind("error: ", 0), 0u) << outcomes[3];
  EXPECT_NE(outcomes[3].find("(tensor 'b')"), std::string::npos) << outcomes[3];

  // A pipeline counts step 3 as unreadable and goes on, with the same findings however many
  // threads it runs on.
  for (const int threads : {1, 4}) {
    const testing::OneRuleReplay replay =
        testing::replay_builtin_rule(dir.path(), threads, "UnchangedTensor");
    EXPECT_EQ(testing::fired_tensors_by_step(replay.events),
              (std::vector<std::string>{"2: b c", "4: b", "5: b", "6: b c", "7: b c"}))
        << threads << " threads";
    ASSERT_FALSE(replay.events.empty());
    const RuleEvent& status = replay.events.back();
    EXPECT_EQ(status.status, RuleStatus::IssuesFound) << threads << " threads";
    EXPECT_EQ(status.steps_evaluated, 7) << threads << " threads";
    EXPECT_NE(status.message.find("could not read its data at 1 of 8 steps (first, step 3: "),
              std::string::npos)
        << status.message;
    EXPECT_NE(status.message.find("(tensor 'b')"), std::string::npos) << status.message;
  }
}

TEST(UnchangedTensorRule, RejectsBadParametersNamingThem) {
  EXPECT_EQ(testing::config_error("UnchangedTensor", {{"num_steps", "1"}}),
            "rule UnchangedTensor: parameter num_steps: \"1\" must be at least 2 (a step and one "
            "before it)");
  const std::string error = testing::config_error("UnchangedTensor", {{"rtol", "tight"}});
  EXPECT_NE(error.find("UnchangedTensor"), std::string::npos) << error;
  EXPECT_NE(error.find("rtol"), std::string::npos) << error;
  EXPECT_NE(error.find("\"tight\""), std::string::npos) << error;
  EXPECT_NE(testing::config_error("UnchangedTensor", {{"equal_nan", "maybe"}}).find("equal_nan"),
            std::string::npos);
  // The document's own example configuration builds.
  EXPECT_EQ(testing::config_error("UnchangedTensor", {{"collection_names", "losses"},
                                                      {"tensor_regex", ""},
                                                      {"num_steps", "3"},
                                                      {"rtol", "1e-05"},
                                                      {"atol", "1e-08"},
                                                      {"equal_nan", "False"}}),
            "");
}

// smdebug's pt-lr0-plateau: learning rate 0 on a fixed batch, so the loss (saved every step) is
// bit-identical throughout and the weights and gradients (saved every 3 steps) never change.
TEST(UnchangedTensorRule, FiresOnSmdebugsLearningRateZeroSample) {
  const auto samples = testing::samples_dir();
  if (!samples) GTEST_SKIP() << "smdebug-samples not found (set RULESTREAM_SAMPLES)";
  const Trial trial = Trial::open((*samples / "trials" / "pt-lr0-plateau").string());

  Steps every_step;
  for (std::int64_t step = 2; step < 60; ++step) every_step.push_back(step);
  Steps every_third;
  for (std::int64_t step = 6; step < 60; step += 3) every_third.push_back(step);

  EXPECT_EQ(testing::fired_steps("UnchangedTensor", trial), every_step);
  EXPECT_EQ(testing::fired_steps("UnchangedTensor", trial, {{"collection_names", "losses"}}),
            every_step);
  EXPECT_EQ(testing::fired_steps("UnchangedTensor", trial, {{"collection_names", "weights"}}),
            every_third);

  const Finding finding =
      testing::finding_at("UnchangedTensor", trial, 6, {{"collection_names", "weights"}});
  EXPECT_EQ(finding.tensors,
            (std::vector<std::string>{"MLP_fc1.weight", "MLP_fc2.weight", "MLP_fc3.weight"}));
  EXPECT_EQ(finding.message,
            "MLP_fc1.weight unchanged over saved steps 0..6 (3 saves, largest difference 0 "
            "within rtol 1e-05, atol 1e-08) (and 2 more tensors)");
}

// smdebug's pt-mlp-basic trains normally. Its EVAL phases save the same weights at several
// EVAL steps in a row (global 40, 43, 46, 49): only training steps are compared, so the rule
// stays quiet.
TEST(UnchangedTensorRule, StaysQuietOnSmdebugsHealthySampleWhoseEvalStepsRepeatTheWeights) {
  const auto samples = testing::samples_dir();
  if (!samples) GTEST_SKIP() << "smdebug-samples not found (set RULESTREAM_SAMPLES)";
  const Trial trial = Trial::open((*samples / "trials" / "pt-mlp-basic").string());
  const Tensor weight = trial.tensor("MLP_fc1.weight");
  ASSERT_TRUE(weight.value(43).identical_to(weight.value(46)));
  EXPECT_EQ(testing::fired_steps("UnchangedTensor", trial), Steps{});
}

}  // namespace
}  // namespace rulestream
