// Trial::tensor_refs at a step of many tensors: the step's list is built by a walk through every
// tensor of the store, which lets the store's lock go every few hundred tensors so that an
// ingestion need not wait for the whole walk. Whatever lands between its parts, each view must
// get exactly what the step holds for it, in name order.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "stages/format/trial_writer.hpp"
#include "tests/support/test_support.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {
namespace {

using rulestream::testing::TempDir;

constexpr int kTensors = 1000;   // saved at every step: several of the walk's parts
constexpr int kNewPerStep = 20;  // names first saved at each step, spread through the name order

TensorValue scalar(float value) {
  return TensorValue::from_values(DType::Float32, Shape{}, std::vector<float>{value});
}

std::string every_step_name(int i) {
  return "t" + std::to_string(1000 + i);
}

// The names first saved at `step`: prefixes before, among and after the "t" names, so that the
// store's map gains nodes on both sides of wherever a walk stands.
std::vector<std::string> new_names(std::int64_t step) {
  std::vector<std::string> names;
  for (int i = 0; i < kNewPerStep; ++i) {
    const char prefix = "amsz"[i % 4];
    names.push_back(std::string(1, prefix) + std::to_string(step) + "_" + std::to_string(i));
  }
  return names;
}

// What step `step` holds, in name order.
std::vector<std::string> names_at_step(std::int64_t step) {
  std::vector<std::string> names = new_names(step);
  for (int i = 0; i < kTensors; ++i) names.push_back(every_step_name(i));
  std::sort(names.begin(), names.end());
  return names;
}

void write_step(TrialWriter& writer, std::int64_t step) {
  writer.begin_step(step, Mode::Train, step);
  for (int i = 0; i < kTensors; ++i) writer.add_tensor(every_step_name(i), scalar(1.0f));
  for (const std::string& name : new_names(step)) writer.add_tensor(name, scalar(2.0f));
  writer.end_step();
}

void write_job(const TempDir& dir, std::int64_t steps) {
  TrialWriter writer({.root = dir.path()});
  for (std::int64_t step = 0; step < steps; ++step) write_step(writer, step);
  writer.write_collections({});
}

TEST(TrialStepListing, AStepOfManyTensorsIsListedWholeInNameOrder) {
  TempDir dir;
  write_job(dir, 3);
  const Trial trial = Trial::open(dir.path().string());
  for (std::int64_t step = 0; step < 3; ++step) {
    EXPECT_EQ(names_of(trial.tensor_refs({.step = step})), names_at_step(step)) << "step " << step;
    // A filter that picks most of them goes through the same list.
    std::vector<std::string> t_names;
    for (int i = 0; i < kTensors; ++i) t_names.push_back(every_step_name(i));
    EXPECT_EQ(names_of(trial.tensor_refs({.step = step, .regex = {"^t"}})), t_names);
  }
}

// One thread ingests the job an index file at a time while another lists each step it can see,
// from a pinned view, as soon as it sees it: the walks run while the store gains tensors before
// and after where they stand.
TEST(TrialStepListing, ListingsWhileTheStoreGrowsAreWhatEachStepHolds) {
  constexpr std::int64_t kSteps = 40;
  TempDir dir;
  TrialWriter writer({.root = dir.path()});
  write_step(writer, 0);
  writer.write_collections({});
  TrialOptions options;
  options.auto_refresh = false;
  options.refresh_batch_bytes = 1;  // one index file a batch: a generation each
  const Trial trial = Trial::open(dir.path().string(), options);
  for (std::int64_t step = 1; step < kSteps; ++step) write_step(writer, step);
  std::atomic<bool> loaded{false};
  std::thread loader([&] {
    trial.refresh();
    loaded = true;
  });
  std::int64_t listed = 0;  // steps listed so far: 0 .. listed - 1
  for (bool last_pass = false; !last_pass;) {
    last_pass = loaded.load();
    const Trial view = trial.pinned();
    for (const std::int64_t step : view.steps()) {
      if (step < listed) continue;
      ASSERT_EQ(names_of(view.tensor_refs({.step = step})), names_at_step(step)) << "step " << step;
      listed = step + 1;
    }
  }
  loader.join();
  EXPECT_EQ(listed, kSteps);
}

}  // namespace
}  // namespace rulestream
