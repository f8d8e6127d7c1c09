// Trial::tensor_refs at a step with a filter that picks a few of many tensors (a rule over the
// losses): it looks at those tensors alone rather than the step's whole list, and must give
// exactly what the step holds for the view asking, as steps and new tensors land.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pipeline/trial/trial.hpp"
#include "stages/format/trial_writer.hpp"
#include "tests/support/test_support.hpp"

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

std::vector<std::string> names_at(const Trial& trial, std::int64_t step, const char* regex) {
  return names_of(trial.tensor_refs({.step = step, .regex = {regex}}));
}

TEST(FilteredTensorNames, AFewOfManyAreWhatTheStepHoldsForTheView) {
  TempDir dir;
  write_steps(dir, "worker_0", 0, 1, {});
  TrialOptions options;
  options.end_of_job_grace = std::chrono::milliseconds(0);
  const Trial trial = Trial::open(dir.path().string(), options);
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

}  // namespace
}  // namespace rulestream
