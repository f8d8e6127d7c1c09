// Trial::tensor_refs with a filter. At a step, one that picks a few of many tensors (a rule over
// the losses) looks at those tensors alone rather than the step's whole list, and must give
// exactly what the step holds for the view asking, as steps and new tensors land; without a
// step, every filter lists from its own list of the tensors that pass.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "stages/format/trial_writer.hpp"
#include "tests/support/test_support.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {
namespace {

using rulestream::testing::TempDir;

constexpr int kWeights = 64;  // the filters below pick 1-2 tensors of 65-67: few of many

TensorValue scalar(float value) {
  return TensorValue::from_values(DType::Float32, Shape{}, std::vector<float>{value});
}

// One worker's steps, each with every weight and the loss, plus `extra` tensors.
void write_steps(const TempDir& dir, const std::string& worker, std::int64_t first,
                 std::int64_t last, const std::vector<std::string>& extra) {
  TrialWriter writer({.root = dir.path(), .worker = worker});
  for (std::int64_t step = first; step <= last; ++step) {
    writer.begin_step(step, Mode::Train, step);
    for (int i = 0; i < kWeights; ++i) {
      writer.add_tensor("layer" + std::to_string(i) + ".weight", scalar(static_cast<float>(i)));
    }
    writer.add_tensor("loss", scalar(1.0f / static_cast<float>(step + 1)));
    for (const std::string& name : extra) writer.add_tensor(name, scalar(0.5f));
    writer.end_step();
  }
}

// A live trial of worker_0's steps 0 and 1 (later steps written to `dir` are picked up).
Trial open_with_two_steps(const TempDir& dir) {
  write_steps(dir, "worker_0", 0, 1, {});
  TrialOptions options;
  options.end_of_job_grace = std::chrono::milliseconds(0);
  return Trial::open(dir.path().string(), options);
}

std::vector<std::string> names_at(const Trial& trial, std::int64_t step, const char* regex) {
  return names_of(trial.tensor_refs({.step = step, .regex = {regex}}));
}

TEST(FilteredTensorNames, AFewOfManyAreWhatTheStepHoldsForTheView) {
  TempDir dir;
  const Trial trial = open_with_two_steps(dir);
  EXPECT_EQ(names_at(trial, 1, "loss"), std::vector<std::string>{"loss"});
  const Trial before = trial.pinned();

  // Later: steps 2-3, with a tensor new to the trial (the filter's list is worked out again).
  write_steps(dir, "worker_0", 2, 3, {"loss_late"});
  EXPECT_EQ(names_at(trial, 1, "loss"), std::vector<std::string>{"loss"});
  EXPECT_EQ(names_at(trial, 2, "loss"), (std::vector<std::string>{"loss", "loss_late"}));
  EXPECT_EQ(names_at(trial, 3, "^loss_late$"), std::vector<std::string>{"loss_late"});
  EXPECT_EQ(names_at(trial, 0, "loss"), std::vector<std::string>{"loss"});
  // The view pinned before: step 1 as it was, and no step 2 yet.
  EXPECT_EQ(names_at(before, 1, "loss"), std::vector<std::string>{"loss"});
  EXPECT_TRUE(names_at(before, 2, "loss").empty());
  // A filter that picks most tensors goes through the step's list: the same answers.
  EXPECT_EQ(names_at(trial, 2, "weight").size(), static_cast<std::size_t>(kWeights));
  EXPECT_EQ(names_at(before, 1, "weight").size(), static_cast<std::size_t>(kWeights));
}

// Without a step, a filtered query lists the tensors that pass from the filter's own list (it
// is asked at every step by VanishingGradient): exactly those the view has seen, in the mode
// asked, as new tensors land.
TEST(FilteredTensorNames, WithoutAStepAreEveryTensorTheViewHasSeenInTheMode) {
  TempDir dir;
  const Trial trial = open_with_two_steps(dir);
  const auto names = [](const Trial& of, Mode mode, const char* regex) {
    return names_of(of.tensor_refs({.mode = mode, .regex = {regex}}));
  };
  EXPECT_EQ(names(trial, Mode::Global, "loss"), std::vector<std::string>{"loss"});
  const Trial before = trial.pinned();

  // Later: training steps with a tensor new to the trial, then an evaluation step with another.
  write_steps(dir, "worker_0", 2, 3, {"loss_late"});
  {
    TrialWriter writer({.root = dir.path(), .worker = "worker_0"});
    writer.begin_step(4, Mode::Eval, 0);
    writer.add_tensor("loss", scalar(0.25f));
    writer.add_tensor("eval_loss", scalar(0.5f));
    writer.end_step();
  }
  EXPECT_EQ(names(trial, Mode::Global, "loss"),
            (std::vector<std::string>{"eval_loss", "loss", "loss_late"}));
  EXPECT_EQ(names(trial, Mode::Train, "loss"), (std::vector<std::string>{"loss", "loss_late"}));
  EXPECT_EQ(names(trial, Mode::Eval, "loss"), (std::vector<std::string>{"eval_loss", "loss"}));
  EXPECT_EQ(names(trial, Mode::Global, "weight").size(), static_cast<std::size_t>(kWeights));
  EXPECT_TRUE(names(trial, Mode::Eval, "weight").empty());
  // The view pinned before the later steps: the filter's list now holds the later tensors too,
  // and this view still sees none of them.
  EXPECT_EQ(names(before, Mode::Global, "loss"), std::vector<std::string>{"loss"});
  EXPECT_EQ(names(before, Mode::Train, "loss"), std::vector<std::string>{"loss"});
  EXPECT_TRUE(names(before, Mode::Eval, "loss").empty());
  // A filter that passes nothing, and one first asked only now, after every tensor landed.
  EXPECT_TRUE(names(trial, Mode::Global, "^nothing$").empty());
  EXPECT_EQ(names(before, Mode::Global, "^loss_late$"), std::vector<std::string>{});
  EXPECT_EQ(names(trial, Mode::Global, "^loss_late$"), std::vector<std::string>{"loss_late"});
}

}  // namespace
}  // namespace rulestream
