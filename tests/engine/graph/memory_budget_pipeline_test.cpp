// --max-memory bounds the process, not each holder: a replay of compressed event files, each
// inflating to 60% of the budget, on two threads, with a rule reading every value, grows the
// resident set by no more than the budget and a small allowance. Before the budget was one,
// the two loader threads' inflations (each within the budget), the value cache (the budget
// again) and the inflated files the store kept (the budget again) added up to about twice it.
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "engine/graph/rule_pipeline.hpp"
#include "rules/rule_registry.hpp"
#include "stages/format/trial_writer.hpp"
#include "tests/support/peak_rss.hpp"
#include "tests/support/recording_sink.hpp"
#include "tests/support/test_support.hpp"
#include "trial/api/tensor.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {
namespace {

using rulestream::testing::RecordingSink;
using rulestream::testing::TempDir;
using namespace std::chrono_literals;

constexpr std::size_t kBudget = std::size_t{40} << 20;
// 48 tensors of 512 KiB: each step's event file inflates to 24 MiB, 60% of the budget.
constexpr int kTensors = 48;
constexpr std::int64_t kElements = 131072;
constexpr std::int64_t kSteps = 4;
// What grows beside the budget: thread stacks and oneTBB's, the store's arena and index, the
// value the rule holds while it checks it, allocator slack (docs/architecture.md, "Limits").
constexpr std::size_t kAllowance = std::size_t{16} << 20;

float fill_of(std::int64_t step, int tensor) {
  return static_cast<float>(step) + 0.25f * static_cast<float>(tensor);
}

std::string tensor_name(int tensor) {
  return "t" + std::to_string(tensor);
}

// A one-worker trial, gzip-compressed as TensorFlow can write it: every element of tensor i at
// step s is fill_of(s, i), so the files compress to little and inflate to much.
void write_trial(const std::filesystem::path& root) {
  TrialWriter writer({.root = root, .compression = Compression::Gzip});
  for (std::int64_t step = 0; step < kSteps; ++step) {
    writer.begin_step(step, Mode::Train, step);
    for (int tensor = 0; tensor < kTensors; ++tensor) {
      writer.add_tensor(
          tensor_name(tensor),
          TensorValue::from_values(DType::Float32, Shape{kElements},
                                   std::vector<float>(kElements, fill_of(step, tensor))));
    }
    writer.end_step();
  }
  writer.write_end_marker();
}

// Reads every tensor's whole value at every step and counts those that hold what was written.
class ReadsEveryValue final : public Rule {
 public:
  ReadsEveryValue(Trial trial, std::map<std::int64_t, int>& intact)
      : Rule(std::move(trial)), intact_(intact) {}
  std::string_view name() const override { return "ReadsEveryValue"; }
  bool invoke_at_step(std::int64_t step) override {
    for (int tensor = 0; tensor < kTensors; ++tensor) {
      const TensorValue value = base_trial().tensor(tensor_name(tensor)).value(step);
      bool intact = value.size() == kElements;
      for (std::int64_t i = 0; intact && i < kElements; i += 1024) {
        float element = 0;
        std::memcpy(&element, value.bytes().data() + i * 4, 4);
        intact = element == fill_of(step, tensor);
      }
      intact_[step] += intact ? 1 : 0;
    }
    return false;
  }
  RequiredTensors required_tensors() const override {
    return {.regexes = {"^t[0-9]+$"}, .values = true};
  }

 private:
  std::map<std::int64_t, int>& intact_;
};

TEST(MemoryBudgetPipeline, CompressedFilesOnTwoThreadsStayWithinOneBudget) {
  if (!testing::resident_set_is_meaningful()) {
    GTEST_SKIP() << "a sanitizer build's resident set counts its own shadow memory";
  }
  TempDir dir;
  const std::filesystem::path root = dir.path() / "job";
  write_trial(root);

  std::map<std::int64_t, int> intact;
  RuleRegistry registry = RuleRegistry::builtin();
  registry.add({.name = "ReadsEveryValue",
                .create = [&intact](const RuleContext& context, const RuleParameters&) {
                  return std::unique_ptr<Rule>(new ReadsEveryValue(context.base_trial, intact));
                }});
  PipelineConfig config;
  config.paths = {root.string()};
  config.rules = {{"RV", "ReadsEveryValue", {}}};
  config.threads = 2;
  config.max_memory = kBudget;
  auto sink = std::make_unique<RecordingSink>();
  RecordingSink* recording = sink.get();
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::move(sink));
  RulePipeline pipeline(std::move(config), std::move(sinks), registry);

  // What the code holds, not what glibc keeps: freed memory it kept (writing the trial) would be
  // reused unseen, so it goes back; and with its mmap threshold fixed, freed large blocks go back
  // at once rather than raise the threshold and stay in a thread's arena.
  ::mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  ::malloc_trim(0);
  const auto before = testing::resident_bytes("VmRSS");
  if (!before || !testing::reset_peak_rss()) {
    GTEST_SKIP() << "this kernel does not say or reset the peak resident set";
  }
  const PipelineReport report = pipeline.run();
  const auto peak = testing::resident_bytes("VmHWM");
  ASSERT_TRUE(peak);

  // Every value was read whole and right; nothing was refused.
  EXPECT_TRUE(report.problems.empty())
      << report.problems.front().path << ": " << report.problems.front().message;
  for (std::int64_t step = 0; step < kSteps; ++step) {
    EXPECT_EQ(intact[step], kTensors) << "step " << step;
  }
  ASSERT_TRUE(recording->status_of("RV"));
  EXPECT_EQ(recording->status_of("RV")->status, RuleStatus::NoIssuesFound);
  EXPECT_EQ(recording->status_of("RV")->steps_evaluated, kSteps);
  // And the process grew by no more than the budget and the allowance.
  std::cout << "grew by " << ((*peak - *before) >> 20) << " MiB; the budget's peak "
            << (report.memory_budget_peak >> 20) << " MiB, " << report.memory_budget_waits
            << " waits\n";
  EXPECT_LE(*peak - *before, kBudget + kAllowance)
      << "grew by " << ((*peak - *before) >> 20) << " MiB against a budget of " << (kBudget >> 20)
      << " MiB";
}

}  // namespace
}  // namespace rulestream
