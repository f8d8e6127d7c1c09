// An event file cut short and written again in place while the pipeline runs (a training job
// restarting from a checkpoint), in a replay and under a live watch: the run goes on, values a
// rule already holds keep what they held, a read of the cut file is an error naming it, and reads
// after the rewrite see its new content. The file is large (past 4 MiB) and the rule reads most
// of it: the shape in which storage maps it, so that touching it raised SIGBUS before mappings
// were made under read leases (sources/local/file_leases.hpp).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/model/exceptions.hpp"
#include "engine/graph/rule_pipeline.hpp"
#include "rules/rule_registry.hpp"
#include "stages/format/trial_writer.hpp"
#include "tests/support/lease_probe.hpp"
#include "tests/support/recording_sink.hpp"
#include "tests/support/test_support.hpp"
#include "trial/api/tensor.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {
namespace {

using rulestream::testing::RecordingSink;
using rulestream::testing::TempDir;
using namespace std::chrono_literals;

// 1.25 M floats: a 5 MiB event file per step.
constexpr std::int64_t kElements = 1'250'000;
constexpr std::int64_t kSteps = 5;
constexpr std::int64_t kRewrittenStep = 2;

// The value of "w" at `step`: every element `fill`.
TensorValue weights(float fill) {
  return TensorValue::from_values(DType::Float32, Shape{kElements},
                                  std::vector<float>(kElements, fill));
}

// Writes step `step` of a one-worker trial under `root` with "w" filled with `fill`.
void write_step(const std::filesystem::path& root, std::int64_t step, float fill) {
  TrialWriter writer({.root = root});
  writer.begin_step(step, Mode::Train, step);
  writer.add_tensor("w", weights(fill));
  writer.end_step();
}

// The relative path of the one event file under `root` (a trial of one step).
std::filesystem::path only_event_file(const std::filesystem::path& root) {
  std::vector<std::filesystem::path> found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root / "events")) {
    if (entry.is_regular_file()) found.push_back(std::filesystem::relative(entry.path(), root));
  }
  if (found.size() != 1) throw std::logic_error("expected one event file under " + root.string());
  return found.front();
}

std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

float first_float(const TensorValue& value) {
  float first = 0;
  std::memcpy(&first, value.bytes().data(), sizeof first);
  return first;
}

// What the rule saw at the step it rewrote the file of.
struct Seen {
  std::map<std::int64_t, float> first_value;  // the first element of "w" at each step
  bool mapped_when_held = false;              // whether the file was mapped before the cut
  std::optional<float> held_after_cut;        // a value read before the cut, read after it
  std::string read_of_cut_file;               // the error reading the cut file gave
  std::optional<float> after_rewrite;         // read again once the file was written again
};

// Reads "w" at each step. At kRewrittenStep it plays the restarted job between its own reads:
// holds the value, cuts the step's event file to nothing, reads the held value and then the
// file, writes the file again in place with new content (the same layout, "w" filled with -1),
// and reads the value once more.
class RewritingRule final : public Rule {
 public:
  struct Target {
    std::filesystem::path event_file;  // absolute
    std::string rewritten;             // the bytes written over it
  };
  RewritingRule(Trial trial, Seen& seen, const Target& target)
      : Rule(std::move(trial)), seen_(seen), target_(target) {}
  std::string_view name() const override { return "Rewriting"; }
  bool invoke_at_step(std::int64_t step) override {
    const Tensor w = base_trial().tensor("w");
    const TensorValue held = w.value(step);
    seen_.first_value[step] = first_float(held);
    if (step != kRewrittenStep) return false;

    seen_.mapped_when_held = testing::is_mapped_into_this_process(target_.event_file);
    // Blocks until storage has let go of its lease on the file (its mappings copied).
    std::filesystem::resize_file(target_.event_file, 0);
    float sum = 0;  // every page of the held value, as a rule comparing it would touch them
    for (std::int64_t i = 0; i < kElements; i += 1024) {
      float element = 0;
      std::memcpy(&element, held.bytes().data() + i * 4, 4);
      sum += element;
    }
    seen_.held_after_cut = sum / static_cast<float>((kElements + 1023) / 1024);
    try {
      w.value(step);
    } catch (const RulestreamError& error) {
      seen_.read_of_cut_file = error.what();
    }
    {
      std::ofstream out(target_.event_file, std::ios::out | std::ios::trunc | std::ios::binary);
      out.write(target_.rewritten.data(), static_cast<std::streamsize>(target_.rewritten.size()));
    }
    seen_.after_rewrite = first_float(w.value(step));
    return false;
  }
  RequiredTensors required_tensors() const override { return {.regexes = {"^w$"}, .values = true}; }

 private:
  Seen& seen_;
  const Target& target_;
};

class RewrittenEventFile : public ::testing::TestWithParam<bool> {
 protected:
  // The bytes of step kRewrittenStep's event file with "w" filled with -1, written apart, and
  // where that file lies in the trial.
  RewritingRule::Target target_for(const std::filesystem::path& root) {
    const std::filesystem::path apart = dir_.path() / "apart";
    write_step(apart, kRewrittenStep, -1.0f);
    const std::filesystem::path relative = only_event_file(apart);
    return {root / relative, file_bytes(apart / relative)};
  }

  RuleRegistry registry_with_rule(Seen& seen, const RewritingRule::Target& target) {
    RuleRegistry registry = RuleRegistry::builtin();
    registry.add({.name = "Rewriting",
                  .create = [&seen, &target](const RuleContext& context, const RuleParameters&) {
                    return std::unique_ptr<Rule>(
                        new RewritingRule(context.base_trial, seen, target));
                  }});
    return registry;
  }

  TempDir dir_;
};

TEST_P(RewrittenEventFile, TheRunGoesOnAndReadsTheNewContent) {
  const bool live = GetParam();
  const std::filesystem::path root = dir_.path() / "job";
  std::filesystem::create_directories(root);
  const RewritingRule::Target target = target_for(root);
  const auto write_job = [&] {
    for (std::int64_t step = 0; step < kSteps; ++step) {
      write_step(root, step, static_cast<float>(step));
      if (live) std::this_thread::sleep_for(20ms);
    }
    TrialWriter({.root = root}).write_end_marker();
  };
  if (!live) write_job();

  Seen seen;
  const RuleRegistry registry = registry_with_rule(seen, target);
  PipelineConfig config;
  config.paths = {root.string()};
  config.rules = {{"RW", "Rewriting", {}}};
  config.follow = live;
  config.end_of_job_grace = 100ms;
  auto sink = std::make_unique<RecordingSink>();
  RecordingSink* recording = sink.get();
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::move(sink));
  RulePipeline pipeline(std::move(config), std::move(sinks), registry);
  std::thread writer;
  if (live) writer = std::thread(write_job);
  const PipelineReport report = pipeline.run();
  if (writer.joinable()) writer.join();

  // Every step evaluated, the ones after the rewrite included.
  EXPECT_EQ(report.steps_released, kSteps);
  ASSERT_EQ(seen.first_value.size(), static_cast<std::size_t>(kSteps));
  for (std::int64_t step = 0; step < kSteps; ++step) {
    EXPECT_EQ(seen.first_value[step], static_cast<float>(step)) << "step " << step;
  }
  ASSERT_TRUE(recording->status_of("RW"));
  EXPECT_EQ(recording->status_of("RW")->steps_evaluated, kSteps);
  // The file was mapped (the shape that raised SIGBUS), and the value held across the cut keeps
  // what it held (every element kRewrittenStep).
  // (Where the file system grants no leases, storage copied the file: nothing was mapped.)
  EXPECT_EQ(seen.mapped_when_held, testing::folder_grants_leases(dir_.path()));
  ASSERT_TRUE(seen.held_after_cut.has_value());
  EXPECT_EQ(*seen.held_after_cut, static_cast<float>(kRewrittenStep));
  // The cut file is an error naming it, not a crash and not the old bytes.
  EXPECT_NE(seen.read_of_cut_file.find(target.event_file.filename().string()), std::string::npos)
      << seen.read_of_cut_file;
  // Written again, it is read as it is now.
  ASSERT_TRUE(seen.after_rewrite.has_value());
  EXPECT_EQ(*seen.after_rewrite, -1.0f);
}

INSTANTIATE_TEST_SUITE_P(ReplayAndWatch, RewrittenEventFile, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& param_info) {
                           return param_info.param ? std::string("Watch") : std::string("Replay");
                         });

}  // namespace
}  // namespace rulestream
