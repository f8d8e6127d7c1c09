// The streaming pipeline end to end: replay and live watch of generated jobs, with the rules
// firing at exactly the steps the scenarios put their faults at.
#include "engine/graph/rule_pipeline.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cmath>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "apps/simulator/job_simulator.hpp"
#include "core/model/exceptions.hpp"
#include "rules/rule_registry.hpp"
#include "stages/format/trial_writer.hpp"
#include "tests/support/recording_sink.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/test_support.hpp"
#include "trial/api/tensor.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {
namespace {

using rulestream::testing::RecordingSink;
using rulestream::testing::TempDir;
using namespace std::chrono_literals;

struct Run {
  PipelineReport report;
  RecordingSink* sink = nullptr;
};

std::vector<std::unique_ptr<Sink>> sinks_with(RecordingSink*& recording) {
  auto sink = std::make_unique<RecordingSink>();
  recording = sink.get();
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::move(sink));
  return sinks;
}

JobSimulatorOptions job(const std::filesystem::path& out, JobScenario scenario, std::int64_t steps,
                        std::int64_t fault_step) {
  JobSimulatorOptions options;
  options.output = out;
  options.scenario = scenario;
  options.steps = steps;
  options.fault_step = fault_step;
  options.tensor_size = 64;
  return options;
}

PipelineConfig config_for(const std::filesystem::path& trial, std::vector<RuleConfig> rules,
                          bool follow = false) {
  PipelineConfig config;
  config.paths = {trial.string()};
  config.rules = std::move(rules);
  config.follow = follow;
  config.end_of_job_grace = 100ms;
  return config;
}

TEST(RulePipeline, ReplayFiresAtTheFaultStepsAndReportsStatuses) {
  TempDir dir;
  auto options = job(dir.path() / "job", JobScenario::VanishingGradients, 30, 12);
  options.workers = 2;
  options.save_interval = 3;
  JobSimulator(options).run();

  RecordingSink* sink = nullptr;
  RulePipeline pipeline(config_for(dir.path() / "job",
                                   {{"VG", "VanishingGradient", {}}, {"", "ExplodingTensor", {}}}),
                        sinks_with(sink));
  const PipelineReport report = pipeline.run();
  EXPECT_EQ(sink->steps_fired("VG"), (std::vector<std::int64_t>{12, 15, 18, 21, 24, 27}));
  EXPECT_TRUE(sink->steps_fired("ExplodingTensor").empty());
  ASSERT_TRUE(sink->status_of("VG"));
  EXPECT_EQ(sink->status_of("VG")->status, RuleStatus::IssuesFound);
  EXPECT_EQ(sink->status_of("VG")->steps_evaluated, 10);
  EXPECT_EQ(sink->status_of("ExplodingTensor")->status, RuleStatus::NoIssuesFound);
  EXPECT_EQ(report.conditions_met, 6);
  EXPECT_EQ(report.steps_released, 10);
  EXPECT_EQ(report.incomplete_steps, 0);
  EXPECT_EQ(report.index_files, 20);
  EXPECT_TRUE(report.problems.empty());
  // What each rule cost, in configuration order: both evaluated ten steps.
  ASSERT_EQ(report.rule_busy.size(), 2u);
  EXPECT_GT(report.rule_busy[0].count(), 0);
  EXPECT_GT(report.rule_busy[1].count(), 0);

  // Events carry what made the rule fire.
  for (const auto& event : sink->events()) {
    if (event.kind != RuleEvent::Kind::ConditionMet) continue;
    EXPECT_EQ(event.trial, "job");
    EXPECT_EQ(event.rule, "VanishingGradient");
    EXPECT_EQ(event.mode, Mode::Train);
    EXPECT_FALSE(event.tensors.empty());
    EXPECT_FALSE(event.figures.empty());
    EXPECT_FALSE(event.message.empty());
  }
}

TEST(RulePipeline, StartAndEndStepBoundTheEvaluation) {
  TempDir dir;
  JobSimulator(job(dir.path() / "job", JobScenario::VanishingGradients, 20, 5)).run();
  RecordingSink* sink = nullptr;
  auto config = config_for(dir.path() / "job", {{"VG", "VanishingGradient", {}}});
  config.start_step = 8;
  config.end_step = 11;
  RulePipeline pipeline(std::move(config), sinks_with(sink));  // owns the sink
  pipeline.run();
  EXPECT_EQ(sink->steps_fired("VG"), (std::vector<std::int64_t>{8, 9, 10}));
}

TEST(RulePipeline, WatchFollowsAJobBeingWrittenAndStopsAtItsEnd) {
  TempDir dir;
  const auto root = dir.path() / "job";
  std::filesystem::create_directories(root);
  auto options = job(root, JobScenario::Exploding, 16, 8);
  options.workers = 2;
  options.step_delay = 20ms;
  options.atomic_rename = false;  // files grow in place; the watcher waits for their close

  RecordingSink* sink = nullptr;
  RulePipeline pipeline(config_for(root, {{"ET", "ExplodingTensor", {}}}, true), sinks_with(sink));
  std::thread writer([&] {
    std::this_thread::sleep_for(50ms);  // the watcher starts on an empty folder
    JobSimulator(options).run();
  });
  const PipelineReport report = pipeline.run();
  writer.join();
  // The loss is infinite from fault_step + 1 and NaN after: every step from there fires.
  const auto fired = sink->steps_fired("ET");
  ASSERT_FALSE(fired.empty());
  EXPECT_EQ(fired.front(), 9);
  EXPECT_EQ(fired.back(), 15);
  EXPECT_EQ(report.steps_released, 16);
  EXPECT_EQ(report.index_files, 32);
  // Every step reaches the rules once, with both workers' files.
  EXPECT_EQ(report.late_landings, 0);
  EXPECT_EQ(report.incomplete_steps, 0);
}

// A finished job copied whole (cp -r, cp -a, rsync) may get its end marker first and its index
// files later than a grace: the marker means "read what is there, and what lands while the job
// settles". Before, the watch ended a grace after the marker with "no step of the job was read".
TEST(RulePipeline, AnEndMarkerThatLandsBeforeTheJobIsReadWithWhatFollows) {
  TempDir dir;
  const auto finished = dir.path() / "finished";
  JobSimulator(job(finished, JobScenario::Exploding, 12, 6)).run();
  ASSERT_TRUE(std::filesystem::exists(finished / "training_job_end.ts"));
  const auto copy = dir.path() / "copy";
  std::filesystem::create_directories(copy);
  std::filesystem::copy_file(finished / "training_job_end.ts", copy / "training_job_end.ts");

  RecordingSink* sink = nullptr;
  RulePipeline pipeline(config_for(copy, {{"ET", "ExplodingTensor", {}}}, true), sinks_with(sink));
  std::thread copier([&] {
    std::this_thread::sleep_for(600ms);  // six graces (100 ms here) after the marker
    for (const char* folder : {"collections", "events", "index"}) {
      std::filesystem::copy(finished / folder, copy / folder,
                            std::filesystem::copy_options::recursive);
    }
  });
  const PipelineReport report = pipeline.run();  // ends by itself once the job settled
  copier.join();
  // Every step, though cp lands them in no particular order: none late, none lost.
  EXPECT_EQ(report.steps_released, 12);
  EXPECT_EQ(report.late_landings, 0);
  ASSERT_EQ(report.statuses.size(), 1U);
  EXPECT_EQ(report.statuses[0].status, RuleStatus::IssuesFound) << report.statuses[0].message;
  EXPECT_FALSE(sink->steps_fired("ET").empty());
}

// --max-memory bounds the decoded values a replay keeps as copies (those of compressed event
// files; a local file's are read again from its mapping): the trial's cache gets the whole budget
// (one trial), keeps values, and never holds more than it.
TEST(RulePipeline, DecodedCopiesStayWithinMaxMemory) {
  TempDir dir;
  auto options = job(dir.path() / "gzipped", JobScenario::Healthy, 40, 0);
  options.tensor_size = 256;  // 1 KiB values: many fit in a stripe of the budget
  options.compression = Compression::Gzip;
  JobSimulator(options).run();
  for (const std::size_t budget : {std::size_t{64} << 10, std::size_t{256} << 10}) {
    SCOPED_TRACE(budget);
    auto config = config_for(dir.path() / "gzipped", {{"WUR", "WeightUpdateRatio", {}}});
    config.max_memory = budget;
    RecordingSink* sink = nullptr;
    RulePipeline pipeline(std::move(config), sinks_with(sink));
    const PipelineReport report = pipeline.run();
    EXPECT_EQ(report.statuses.at(0).status, RuleStatus::NoIssuesFound)
        << report.statuses.at(0).message;
    EXPECT_EQ(report.value_cache_budget, budget);
    EXPECT_GT(report.value_cache_peak, 0U) << "no value was kept: the test reads none as copies";
    EXPECT_LE(report.value_cache_peak, budget);
  }
}

// One thread (--threads 1, or a container held to one CPU, where oneTBB gives no worker): the
// source is followed beside the run's one thread, which decodes and evaluates meanwhile. Before,
// following took that thread, nothing was decoded, and the watch never ended.
TEST(RulePipeline, AWatchOnOneThreadEvaluatesAsItFollowsAndEndsAtTheEndMarker) {
  TempDir dir;
  const auto root = dir.path() / "job";
  std::filesystem::create_directories(root);
  auto options = job(root, JobScenario::Exploding, 16, 8);
  options.step_delay = 20ms;

  RecordingSink* sink = nullptr;
  PipelineConfig config = config_for(root, {{"ET", "ExplodingTensor", {}}}, true);
  config.threads = 1;
  RulePipeline pipeline(std::move(config), sinks_with(sink));
  std::atomic<bool> written{false};
  std::thread writer([&] {
    std::this_thread::sleep_for(50ms);
    JobSimulator(options).run();
    written = true;
  });
  // Steps are evaluated while the job is written, not only once it has ended; and the run
  // ends by itself (a watchdog stops it after 60 s, and says so, rather than hang the suite).
  std::atomic<bool> evaluated_while_writing{false};
  std::atomic<bool> ran{false};
  std::atomic<bool> stopped_by_watchdog{false};
  std::thread probe([&] {
    const auto give_up = std::chrono::steady_clock::now() + 60s;
    while (!ran && std::chrono::steady_clock::now() < give_up) {
      if (!written && pipeline.progress().steps_released > 0) evaluated_while_writing = true;
      std::this_thread::sleep_for(2ms);
    }
    if (!ran) {
      stopped_by_watchdog = true;
      pipeline.request_stop();
    }
  });
  const PipelineReport report = pipeline.run();
  ran = true;
  writer.join();
  probe.join();
  EXPECT_FALSE(stopped_by_watchdog) << "the watch did not end at the end marker";
  EXPECT_TRUE(evaluated_while_writing);
  EXPECT_EQ(report.steps_released, 16);
  const auto fired = sink->steps_fired("ET");
  ASSERT_FALSE(fired.empty());
  EXPECT_EQ(fired.front(), 9);
  EXPECT_EQ(fired.back(), 15);
  ASSERT_EQ(report.statuses.size(), 1u);
  EXPECT_EQ(report.statuses[0].status, RuleStatus::IssuesFound);
}

// The worker count comes from a collections file that may land after a step's first index
// file: the step must still wait for every worker the collections declare.
TEST(RulePipeline, AStepWaitsForTheWorkersACollectionsFileDeclaresAfterItsFirstLanding) {
  TempDir dir;
  const auto root = dir.path() / "job";
  std::filesystem::create_directories(root);
  CollectionsFile collections;
  collections.num_workers = 2;
  Collection gradients;
  gradients.name = "gradients";
  gradients.include_regex = {"^gradient"};
  collections.collections["gradients"] = gradients;
  const auto zeros = TensorValue::from_values(DType::Float32, {2}, std::vector<float>{0.0f, 0.0f});

  RecordingSink* sink = nullptr;
  RulePipeline pipeline(config_for(root, {{"VG", "VanishingGradient", {}}}, true),
                        sinks_with(sink));
  std::thread workers([&] {
    TrialWriter worker_0({.root = root, .worker = "worker_0"});
    TrialWriter worker_1({.root = root, .worker = "worker_1"});
    std::this_thread::sleep_for(50ms);
    worker_0.begin_step(0, Mode::Train, 0);
    worker_0.add_tensor("gradient/w", zeros);
    worker_0.end_step();
    std::this_thread::sleep_for(150ms);  // the index file is seen before any collections
    worker_0.write_collections(collections);
    std::this_thread::sleep_for(300ms);  // worker_1 lags well past the collections
    worker_1.write_collections(collections);
    worker_1.begin_step(0, Mode::Train, 0);
    worker_1.add_tensor("gradient/w", zeros);
    worker_1.end_step();
    worker_0.write_end_marker();
  });
  const PipelineReport report = pipeline.run();
  workers.join();
  EXPECT_EQ(sink->steps_fired("VG"), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(report.index_files, 2);
  EXPECT_EQ(report.late_landings, 0) << "step 0 left before worker_1 had written it";
  EXPECT_EQ(report.incomplete_steps, 0);
}

TEST(RulePipeline, ASilentWorkerDoesNotStallTheRulesPastTheGrace) {
  TempDir dir;
  const auto root = dir.path() / "job";
  const auto only_writer = testing::start_two_worker_job(root);
  TrialWriter& writer = *only_writer;

  RecordingSink* sink = nullptr;
  auto config = config_for(root, {{"VG", "VanishingGradient", {}}}, true);
  config.worker_grace = 200ms;
  RulePipeline pipeline(std::move(config), sinks_with(sink));
  std::chrono::system_clock::time_point job_ended;
  std::thread only_worker_0([&] {
    std::this_thread::sleep_for(50ms);
    writer.begin_step(0, Mode::Train, 0);
    writer.add_tensor("gradient/w", TensorValue::from_values(DType::Float32, {2},
                                                             std::vector<float>{0.0f, 0.0f}));
    writer.end_step();
    // Long past the grace: the end of the job, which releases every step anyway, must not be
    // what let this one go.
    std::this_thread::sleep_for(1500ms);
    job_ended = std::chrono::system_clock::now();
    writer.write_end_marker();
  });
  const PipelineReport report = pipeline.run();
  only_worker_0.join();
  EXPECT_EQ(sink->steps_fired("VG"), (std::vector<std::int64_t>{0}));
  EXPECT_EQ(report.incomplete_steps, 1);
  bool said_incomplete = false;
  for (const auto& event : sink->events()) {
    if (event.kind != RuleEvent::Kind::ConditionMet) continue;
    said_incomplete = event.message.find("not every worker") != std::string::npos;
    // Released by the grace (200 ms after the step landed), not by the end of the job.
    EXPECT_LT(event.time, job_ended) << "the step waited for the end of the job, not the grace";
  }
  EXPECT_TRUE(said_incomplete);
}

// A rule whose tensors the job never saved (VanishingGradient on a job without gradients) goes
// through every step finding nothing: that is no all-clear either.
TEST(RulePipeline, ARuleThatFoundNothingItReadsIsInErrorNotNoIssuesFound) {
  TempDir dir;
  const auto root = dir.path() / "job";
  TrialWriter writer({.root = root, .worker = "worker_0"});
  CollectionsFile collections;
  collections.num_workers = 1;
  writer.write_collections(collections);
  for (int step = 0; step < 3; ++step) {
    writer.begin_step(step, Mode::Train, step);
    writer.add_tensor("loss",
                      TensorValue::from_values(DType::Float32, {}, std::vector<float>{1.0F}));
    writer.end_step();
  }
  writer.write_end_marker();
  RecordingSink* sink = nullptr;
  RulePipeline pipeline(config_for(root, {{"VG", "VanishingGradient", {}}}), sinks_with(sink));
  const PipelineReport report = pipeline.run();
  EXPECT_EQ(report.steps_released, 3);
  const auto status = sink->status_of("VG");
  ASSERT_TRUE(status);
  EXPECT_EQ(status->status, RuleStatus::Error);
  EXPECT_EQ(status->message,
            "evaluated 3 steps, but the job saved no tensor it reads (collections gradients)");
  EXPECT_TRUE(report.rule_errors);
}

// A replay asked to stop (Ctrl-C in the CLI) finishes the steps it began, every one with all
// its workers, reads no later index file, and says so in every rule's status.
TEST(RulePipeline, AReplayAskedToStopFinishesTheStepsItBeganAndReadsNoMore) {
  TempDir dir;
  auto options = job(dir.path() / "job", JobScenario::VanishingGradients, 1500, 2);
  options.workers = 2;
  options.tensor_size = 16;
  JobSimulator(options).run();

  RecordingSink* sink = nullptr;
  RulePipeline pipeline(config_for(dir.path() / "job", {{"VG", "VanishingGradient", {}}}),
                        sinks_with(sink));
  std::thread interrupter([&] {
    while (pipeline.progress().steps_released < 3) std::this_thread::sleep_for(1ms);
    pipeline.request_stop();
  });
  const PipelineReport report = pipeline.run();
  interrupter.join();
  ASSERT_TRUE(report.interrupted) << "the whole job was read before the stop";
  EXPECT_GE(report.steps_released, 3);
  EXPECT_LT(report.steps_released, 1500);
  EXPECT_EQ(report.incomplete_steps, 0);
  EXPECT_EQ(report.index_files + report.index_files_unread, 3000);
  EXPECT_EQ(report.index_files, 2 * report.steps_released);
  const auto status = sink->status_of("VG");
  ASSERT_TRUE(status);
  EXPECT_EQ(status->steps_evaluated, report.steps_released);
  EXPECT_NE(status->message.find("interrupted: not read to the end"), std::string::npos)
      << status->message;
  // Steps 2.. vanish: every released one from there fired.
  EXPECT_EQ(static_cast<std::int64_t>(sink->steps_fired("VG").size()), report.steps_released - 2);
}

// Stopped before it began, a replay reads nothing and says so.
TEST(RulePipeline, AReplayStoppedBeforeItBeganReadsNoIndexFile) {
  TempDir dir;
  JobSimulator(job(dir.path() / "job", JobScenario::Healthy, 6, 2)).run();
  RecordingSink* sink = nullptr;
  RulePipeline pipeline(config_for(dir.path() / "job", {{"VG", "VanishingGradient", {}}}),
                        sinks_with(sink));
  pipeline.request_stop();
  const PipelineReport report = pipeline.run();
  EXPECT_TRUE(report.interrupted);
  EXPECT_EQ(report.index_files, 0);
  EXPECT_EQ(report.index_files_unread, 6);
  EXPECT_EQ(report.steps_released, 0);
  ASSERT_TRUE(sink->status_of("VG"));
  EXPECT_NE(sink->status_of("VG")->message.find("interrupted"), std::string::npos);
  // Nothing was looked at: that is no all-clear.
  EXPECT_EQ(sink->status_of("VG")->status, RuleStatus::Error);
  EXPECT_NE(sink->status_of("VG")->message.find("evaluated no step: no step of the job was read"),
            std::string::npos)
      << sink->status_of("VG")->message;
  EXPECT_TRUE(report.rule_errors);
}

// A rule whose inputs the job never saved (ClassImbalance needs labels and predictions; the
// simulated job saves neither) evaluated nothing: its status says so as an Error.
TEST(RulePipeline, ARuleWhoseTensorsWereNeverSavedEndsInErrorNotNoIssuesFound) {
  TempDir dir;
  JobSimulator(job(dir.path() / "job", JobScenario::Healthy, 6, 2)).run();
  RecordingSink* sink = nullptr;
  RulePipeline pipeline(
      config_for(dir.path() / "job", {{"CI", "ClassImbalance", {}}, {"ET", "ExplodingTensor", {}}}),
      sinks_with(sink));
  const PipelineReport report = pipeline.run();
  EXPECT_EQ(report.steps_released, 6);
  ASSERT_TRUE(sink->status_of("CI"));
  EXPECT_EQ(sink->status_of("CI")->steps_evaluated, 0);
  EXPECT_EQ(sink->status_of("CI")->status, RuleStatus::Error);
  EXPECT_EQ(sink->status_of("CI")->message,
            "evaluated no step: what it reads was not saved at any of the 6 steps read");
  // The rule that could look at every step found the healthy job healthy.
  ASSERT_TRUE(sink->status_of("ET"));
  EXPECT_EQ(sink->status_of("ET")->status, RuleStatus::NoIssuesFound);
  EXPECT_EQ(sink->status_of("ET")->steps_evaluated, 6);
  EXPECT_TRUE(report.rule_errors);
}

TEST(RulePipeline, ACorruptRecordIsReportedAndTheReplayGoesOn) {
  TempDir dir;
  JobSimulator(job(dir.path() / "job", JobScenario::VanishingGradients, 10, 4)).run();
  // Break the first record of step 6's event file.
  const auto event_file = dir.path() / "job/events/000000000006/000000000006_worker_0.tfevents";
  {
    std::fstream file(event_file, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(3);
    file.put('\x55');
  }
  RecordingSink* sink = nullptr;
  // ExplodingTensor reads every tensor, so the broken record (the loss) is decoded.
  RulePipeline pipeline(config_for(dir.path() / "job", {{"VG", "VanishingGradient", {}},
                                                        {"ET", "ExplodingTensor", {}}}),
                        sinks_with(sink));
  const PipelineReport report = pipeline.run();
  EXPECT_FALSE(report.problems.empty());
  bool named = false;
  for (const auto& problem : report.problems) {
    named = named || problem.message.find("000000000006_worker_0.tfevents") != std::string::npos;
  }
  EXPECT_TRUE(named);
  const auto fired = sink->steps_fired("VG");
  EXPECT_EQ(fired.front(), 4);
  EXPECT_EQ(fired.back(), 9);
  // ExplodingTensor could not read the loss at step 6: not firing there is no all-clear.
  const auto exploding = sink->status_of("ET");
  ASSERT_TRUE(exploding);
  EXPECT_EQ(exploding->status, RuleStatus::Error);
  EXPECT_EQ(
      exploding->message.rfind("could not read its data at 1 of 10 steps (first, step 6: ", 0), 0u)
      << exploding->message;
  EXPECT_NE(exploding->message.find("000000000006_worker_0.tfevents"), std::string::npos)
      << exploding->message;
}

// A rule over losses reads the loss records' ranges of each event file, not the gradients and
// weights beside them (on S3 those bytes are never downloaded); a rule over everything reads it
// all. Both fire where the data says.
TEST(RulePipeline, ARuleOverLossesReadsOnlyTheLossRecords) {
  TempDir dir;
  auto options = job(dir.path() / "job", JobScenario::LossPlateau, 30, 4);
  options.tensor_size = 4096;  // weights and gradients dwarf the loss
  JobSimulator(options).run();
  std::uint64_t all_bytes = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(dir.path() / "job/events")) {
    if (entry.is_regular_file()) all_bytes += entry.file_size();
  }
  RecordingSink* sink = nullptr;
  RulePipeline losses_only(config_for(dir.path() / "job", {{"LND", "LossNotDecreasing", {}}}),
                           sinks_with(sink));
  const PipelineReport report = losses_only.run();
  EXPECT_TRUE(report.problems.empty());
  EXPECT_GT(report.event_bytes, 0u);
  EXPECT_LT(report.event_bytes * 20, all_bytes) << report.event_bytes << " of " << all_bytes;
  EXPECT_FALSE(sink->steps_fired("LND").empty());

  RulePipeline everything(config_for(dir.path() / "job", {{"ET", "ExplodingTensor", {}}}),
                          sinks_with(sink));
  EXPECT_EQ(everything.run().event_bytes, all_bytes);
}

// The built-in rules and `name`, a test rule that records what it reads into `seen`.
template <typename TestRule>
RuleRegistry with_recording_rule(const std::string& name, typename TestRule::Seen& seen) {
  RuleRegistry registry = RuleRegistry::builtin();
  registry.add({.name = name, .create = [&seen](const RuleContext& context, const RuleParameters&) {
                  return std::unique_ptr<Rule>(new TestRule(context.base_trial, seen));
                }});
  return registry;
}

// Reads the values of some tensors (a small share of each file, so the pipeline reads the files
// in batches rather than mapping them) at its step and the step before, and notes their bytes:
// values decoded as they landed, from a buffer reused batch after batch, must still hold their
// own bytes when a rule reads them a step later. Small values share a batch with others; large
// ones fill a batch alone (and the cache would keep them without a copy of its own).
class ValueCopyRule final : public Rule {
 public:
  using Seen = std::map<std::pair<std::string, std::int64_t>, std::string>;
  static constexpr const char* kRegex = "layer[0-9]*7[.]weight$";
  ValueCopyRule(Trial trial, Seen& seen) : Rule(std::move(trial)), seen_(seen) {}
  std::string_view name() const override { return "ValueCopy"; }
  bool invoke_at_step(std::int64_t step) override {
    for (const std::int64_t at : {step - 1, step}) {
      if (at < 0) continue;
      for (const std::string& tensor : base_trial().tensor_names({.step = at, .regex = {kRegex}})) {
        seen_[{tensor, at}] =
            std::string(base_trial().tensor(tensor).value(at).bytes().as_string_view());
      }
    }
    return false;
  }
  RequiredTensors required_tensors() const override {
    return {.regexes = {kRegex}, .values = true};
  }

 private:
  Seen& seen_;
};

class ValuesKeptForRules : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(ValuesKeptForRules, OwnTheirBytes) {
  TempDir dir;
  auto options = job(dir.path() / "job", JobScenario::Healthy, 6, 0);
  options.extra_tensor_size = GetParam();
  options.extra_tensors = GetParam() > 1000 ? 20 : 300;
  JobSimulator(options).run();
  ValueCopyRule::Seen seen;
  const RuleRegistry registry = with_recording_rule<ValueCopyRule>("ValueCopy", seen);
  RecordingSink* sink = nullptr;
  // ExplodingTensor has every record decoded, most of them only to be reduced.
  RulePipeline pipeline(
      config_for(dir.path() / "job", {{"VC", "ValueCopy", {}}, {"ET", "ExplodingTensor", {}}}),
      sinks_with(sink), registry);
  const PipelineReport report = pipeline.run();
  EXPECT_TRUE(report.problems.empty());
  // The same values read afresh, by a trial of its own.
  const Trial fresh = Trial::open((dir.path() / "job").string());
  for (const auto& [key, bytes] : seen) {
    // Not ASSERT_EQ: a mismatch would print kilobytes of floats.
    ASSERT_TRUE(bytes == fresh.tensor(key.first).value(key.second).bytes().as_string_view())
        << key.first << " at step " << key.second << " differs";
  }
  std::size_t expected = 0;
  for (std::int64_t step = 0; step < 6; ++step) {
    expected += fresh.tensor_names({.step = step, .regex = {ValueCopyRule::kRegex}}).size();
  }
  EXPECT_EQ(seen.size(), expected);
  EXPECT_GE(expected, 6u * 2u);
}

// 32 floats: many records per batch; 70,000: a record longer than a batch; 300,000: one longer
// than a thread's kept buffer, read as storage reads ranges.
INSTANTIATE_TEST_SUITE_P(RecordSizes, ValuesKeptForRules, ::testing::Values(32, 70'000, 300'000));

// Reads the value and the mean of every tensor at its step and the step before. Rules that read
// most of a file's values have the file kept mapped for them (their reads are slices of it),
// while the pipeline decodes the records for their reductions from buffers it reads itself.
class EveryValueRule final : public Rule {
 public:
  struct Read {
    std::string bytes;
    double mean = 0.0;
    bool from_kept_mapping = false;
    DType dtype = DType::Invalid;
    Shape shape;
    ReductionSet sum_and_l1;  // value_reductions of those two keys only
  };
  static constexpr std::array<ReductionKey, 2> kSumAndL1{
      {{Reduction::Sum, false}, {Reduction::L1, false}}};
  using Seen = std::map<std::pair<std::string, std::int64_t>, Read>;
  EveryValueRule(Trial trial, Seen& seen) : Rule(std::move(trial)), seen_(seen) {}
  std::string_view name() const override { return "EveryValue"; }
  bool invoke_at_step(std::int64_t step) override {
    for (const std::int64_t at : {step - 1, step}) {
      if (at < 0) continue;
      for (const std::string& tensor : base_trial().tensor_names({.step = at})) {
        const Tensor handle = base_trial().tensor(tensor);
        const TensorValue value = handle.value(at);
        seen_[{tensor, at}] = {std::string(value.bytes().as_string_view()),
                               handle.reduction_value(at, Reduction::Mean).as_double(),
                               value.bytes().in_kept_mapping(),
                               value.dtype(),
                               value.shape(),
                               handle.value_reductions(kSumAndL1, at)};
      }
    }
    return false;
  }
  RequiredTensors required_tensors() const override { return {.regexes = {".*"}, .values = true}; }

 private:
  Seen& seen_;
};

TEST(RulePipeline, ValuesOfFilesKeptMappedForRulesAndTheirReductionsAreRight) {
  TempDir dir;
  auto options = job(dir.path() / "job", JobScenario::Healthy, 6, 0);
  options.extra_tensors = 50;
  options.extra_tensor_size = 300;
  JobSimulator(options).run();
  EveryValueRule::Seen seen;
  const RuleRegistry registry = with_recording_rule<EveryValueRule>("EveryValue", seen);
  RecordingSink* sink = nullptr;
  RulePipeline pipeline(config_for(dir.path() / "job", {{"EV", "EveryValue", {}}}),
                        sinks_with(sink), registry);
  const PipelineReport report = pipeline.run();
  EXPECT_TRUE(report.problems.empty());

  const Trial fresh = Trial::open((dir.path() / "job").string());
  std::size_t expected = 0;
  for (std::int64_t step = 0; step < 6; ++step) {
    for (const std::string& tensor : fresh.tensor_names({.step = step})) {
      ++expected;
      const auto it = seen.find({tensor, step});
      ASSERT_NE(it, seen.end()) << tensor << " at step " << step << " was not read";
      const Tensor handle = fresh.tensor(tensor);
      // The rule's reads are of records decoded as they landed, read again from their tensor
      // fields (decode_tensor_at); the fresh trial's decode each Event whole.
      const TensorValue decoded = handle.value(step);
      ASSERT_TRUE(it->second.bytes == decoded.bytes().as_string_view())
          << tensor << " at step " << step << " differs";
      EXPECT_EQ(it->second.dtype, decoded.dtype()) << tensor << " at step " << step;
      EXPECT_EQ(it->second.shape, decoded.shape()) << tensor << " at step " << step;
      // The set landed with the value, two keys of it unpacked, against the fresh trial's set
      // computed from the record.
      const ReductionSet computed = handle.value_reductions(step);
      const ReductionSet& landed = it->second.sum_and_l1;
      for (int k = 0; k < kReductionKeyCount; ++k) {
        const ReductionKey key = ReductionKey::from_index(k);
        const bool asked =
            key == EveryValueRule::kSumAndL1[0] || key == EveryValueRule::kSumAndL1[1];
        ASSERT_EQ(landed.get(key).has_value(), asked && computed.get(key).has_value())
            << tensor << " at step " << step << " " << reduction_key_name(key);
        if (asked && computed.get(key)) {
          EXPECT_EQ(landed.get(key)->bits(), computed.get(key)->bits())
              << tensor << " at step " << step << " " << reduction_key_name(key);
        }
      }
      EXPECT_EQ(landed.counts(), computed.counts()) << tensor << " at step " << step;
      EXPECT_EQ(landed.source_dtype(), computed.source_dtype()) << tensor << " at step " << step;
      EXPECT_TRUE(it->second.from_kept_mapping) << tensor << " at step " << step;
      const double mean = handle.reduction_value(step, Reduction::Mean).as_double();
      if (std::isnan(mean)) {
        EXPECT_TRUE(std::isnan(it->second.mean)) << tensor << " at step " << step;
      } else {
        EXPECT_EQ(it->second.mean, mean) << tensor << " at step " << step;
      }
    }
  }
  EXPECT_EQ(seen.size(), expected);
  EXPECT_GE(expected, 6u * 50u);
  EXPECT_EQ(report.tensors_decoded, expected);  // each record decoded once, as it landed
}

// Reads the values of the tensors `Selection::kRegex` names at each step and notes whether each
// came from a kept mapping of its file.
template <typename Selection>
class SelectedValuesRule final : public Rule {
 public:
  using Seen = EveryValueRule::Seen;
  SelectedValuesRule(Trial trial, Seen& seen) : Rule(std::move(trial)), seen_(seen) {}
  std::string_view name() const override { return "SelectedValues"; }
  bool invoke_at_step(std::int64_t step) override {
    for (const std::string& tensor :
         base_trial().tensor_names({.step = step, .regex = {Selection::kRegex}})) {
      const TensorValue value = base_trial().tensor(tensor).value(step);
      seen_[{tensor, step}] = {std::string(value.bytes().as_string_view()), 0.0,
                               value.bytes().in_kept_mapping()};
    }
    return false;
  }
  RequiredTensors required_tensors() const override {
    return {.regexes = {Selection::kRegex}, .values = true};
  }

 private:
  Seen& seen_;
};

struct LayerWeights {
  static constexpr const char* kRegex = "^MLP_layer[0-9]+[.]weight$";
};
struct TheLoss {
  static constexpr const char* kRegex = "Loss";
};

// Where rules read many values of a file, even under half its bytes (25 weights of 300 floats
// beside their 25 gradients, the model's own layers and the loss), the file is kept mapped for
// them and their reads are slices of it: held as copies, each would cost the value cache an
// entry, which for a thousand small weights a step cost more than the rules themselves. One small
// value of a file (the loss) is still held as a copy, rather than mapping the whole file for it.
template <typename Selection>
EveryValueRule::Seen values_read_by_rule(const std::filesystem::path& dir) {
  auto options = job(dir / "job", JobScenario::Healthy, 4, 0);
  options.extra_tensors = 50;
  options.extra_tensor_size = 300;
  JobSimulator(options).run();
  EveryValueRule::Seen seen;
  const RuleRegistry registry =
      with_recording_rule<SelectedValuesRule<Selection>>("SelectedValues", seen);
  RecordingSink* sink = nullptr;
  RulePipeline pipeline(config_for(dir / "job", {{"SV", "SelectedValues", {}}}), sinks_with(sink),
                        registry);
  const PipelineReport report = pipeline.run();
  EXPECT_TRUE(report.problems.empty());
  const Trial fresh = Trial::open((dir / "job").string());
  for (const auto& [key, read] : seen) {
    EXPECT_TRUE(read.bytes == fresh.tensor(key.first).value(key.second).bytes().as_string_view())
        << key.first << " at step " << key.second << " differs";
  }
  return seen;
}

TEST(RulePipeline, ManyValuesOfAFileAreReadFromItsKeptMappingAndOneSmallValueFromACopy) {
  TempDir dir;
  const EveryValueRule::Seen weights = values_read_by_rule<LayerWeights>(dir.path() / "weights");
  EXPECT_EQ(weights.size(), 4u * 25u);
  for (const auto& [key, read] : weights) {
    EXPECT_TRUE(read.from_kept_mapping) << key.first << " at step " << key.second;
  }
  const EveryValueRule::Seen loss = values_read_by_rule<TheLoss>(dir.path() / "loss");
  EXPECT_EQ(loss.size(), 4u);
  for (const auto& [key, read] : loss) {
    EXPECT_FALSE(read.from_kept_mapping) << key.first << " at step " << key.second;
  }
}

// The trials rules compare with are loaded while the first trial streams (run()), not before,
// and SimilarAcrossRuns gets its steps once they are (its stage holds them meanwhile): through
// the pipeline it fires where it fires on the same trials opened by hand, and stays quiet
// against an identical run, on one thread as on several.
TEST(RulePipeline, ComparesWithOtherTrialsLoadedWhileItsOwnStreams) {
  TempDir dir;
  const auto base = dir.path() / "base";
  const auto same = dir.path() / "same";
  const auto different = dir.path() / "different";
  JobSimulator(job(base, JobScenario::Healthy, 8, 0)).run();
  JobSimulator(job(same, JobScenario::Healthy, 8, 0)).run();
  JobSimulator(job(different, JobScenario::VanishingGradients, 8, 5)).run();

  const auto direct = [&](const std::filesystem::path& other) {
    const auto rule = RuleRegistry::builtin().create(
        "SimilarAcrossRuns", {Trial::open(base.string()), {Trial::open(other.string())}}, {});
    return invoke_rule(*rule);
  };
  const InvokeResult expected = direct(different);
  ASSERT_FALSE(expected.triggered_steps.empty());  // the runs differ somewhere
  const InvokeResult quiet = direct(same);
  ASSERT_TRUE(quiet.triggered_steps.empty());
  ASSERT_GT(quiet.steps_evaluated, 0);

  for (const int threads : {1, 4}) {
    for (const auto& [other, wanted] : {std::pair{same, quiet}, std::pair{different, expected}}) {
      PipelineConfig config = config_for(base, {{"SAR", "SimilarAcrossRuns", {}}});
      config.paths.push_back(other.string());
      config.threads = threads;
      RecordingSink* sink = nullptr;
      RulePipeline pipeline(config, sinks_with(sink));
      const PipelineReport report = pipeline.run();
      EXPECT_TRUE(report.problems.empty()) << other << ", " << threads << " threads";
      EXPECT_FALSE(report.rule_errors) << other << ", " << threads << " threads";
      EXPECT_EQ(sink->steps_fired("SAR"), wanted.triggered_steps)
          << other << ", " << threads << " threads";
      ASSERT_EQ(report.statuses.size(), 1u);
      EXPECT_EQ(report.statuses[0].steps_evaluated, wanted.steps_evaluated)
          << other << ", " << threads << " threads";
    }
  }
}

// An other trial that is no trial fails before anything is read; one that ended having saved
// nothing (smdebug's MissingCollectionFiles) is found as it loads, and reported.
TEST(RulePipeline, AnOtherTrialThatIsNoneIsAnErrorAndAnEmptyOneAProblem) {
  TempDir dir;
  const auto base = dir.path() / "base";
  JobSimulator(job(base, JobScenario::Healthy, 4, 0)).run();
  std::filesystem::create_directories(dir.path() / "nothing");
  PipelineConfig no_trial = config_for(base, {{"SAR", "SimilarAcrossRuns", {}}});
  no_trial.paths.push_back((dir.path() / "nothing").string());
  RecordingSink* sink = nullptr;
  EXPECT_THROW(RulePipeline(no_trial, sinks_with(sink)), StorageError);

  const auto ended = dir.path() / "ended";
  rulestream::testing::write_text_file(ended / "training_job_end.ts", "");
  PipelineConfig empty = config_for(base, {{"SAR", "SimilarAcrossRuns", {}}});
  empty.paths.push_back(ended.string());
  RulePipeline pipeline(empty, sinks_with(sink));
  const PipelineReport report = pipeline.run();
  ASSERT_EQ(report.problems.size(), 1u);
  EXPECT_NE(report.problems[0].message.find("collection"), std::string::npos)
      << report.problems[0].message;
  EXPECT_EQ(report.problems[0].path, ended.string());
}

TEST(RulePipeline, BadConfigurationsFailBeforeAnythingIsRead) {
  TempDir dir;
  JobSimulator(job(dir.path() / "job", JobScenario::Healthy, 4, 2)).run();
  RecordingSink* sink = nullptr;
  EXPECT_THROW(
      RulePipeline(config_for(dir.path() / "job", {{"", "NoSuchRule", {}}}), sinks_with(sink)),
      RuleConfigError);
  EXPECT_THROW(RulePipeline(config_for(dir.path() / "job",
                                       {{"", "VanishingGradient", {{"threshold", "abc"}}}}),
                            sinks_with(sink)),
               RuleConfigError);
  EXPECT_THROW(RulePipeline(config_for(dir.path() / "absent", {{"", "VanishingGradient", {}}}),
                            sinks_with(sink)),
               StorageError);
}

}  // namespace
}  // namespace rulestream
