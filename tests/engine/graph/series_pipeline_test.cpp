// The TensorBoard pipeline on logdirs written here: where rules fire in a replay (the same at
// any thread count), statuses for rules that cannot run or found nothing, problems, and a watch
// that follows files as they grow.
#include "engine/graph/series_pipeline.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <thread>

#include "rules/rule_registry.hpp"
#include "stages/format/tensorboard_writer.hpp"
#include "tests/support/recording_sink.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using ::testing::HasSubstr;
using testing::RecordingSink;
using testing::TempDir;

// A diverging run: train/loss 2.0 falling slowly for 40 steps, then 1e10 at step 40, NaN at
// 41. A validation run whose loss stays flat at 1.5. Steps are 10 apart.
void write_diverging(const std::filesystem::path& logdir) {
  TensorBoardWriter train(logdir / "train" / "events.out.tfevents.1.host");
  for (int i = 0; i < 40; ++i) train.add_scalar("epoch_loss", i * 10, 2.0F - 0.01F * i, i);
  train.add_scalar("epoch_loss", 400, 1e10F, 40);
  train.add_scalar("epoch_loss", 410, std::nanf(""), 41);
  TensorBoardWriter validation(logdir / "validation" / "events.out.tfevents.1.host");
  for (int i = 0; i < 42; ++i) validation.add_scalar("epoch_loss", i * 10, 1.5F, i);
}

PipelineConfig config_for(const std::filesystem::path& logdir,
                          const std::vector<std::string>& rules,
                          const std::map<std::string, std::string>& parameters = {}) {
  PipelineConfig config;
  config.paths = {logdir.string()};
  for (const auto& rule : rules) {
    RuleConfig configured;
    configured.rule = rule;
    if (rule == "LossNotDecreasing") configured.parameters = parameters;
    config.rules.push_back(configured);
  }
  return config;
}

struct PipelineRun {
  SeriesReport report;
  std::vector<RuleEvent> events;
};

PipelineRun run_pipeline(PipelineConfig config) {
  auto sink = std::make_unique<RecordingSink>();
  auto* recorded = sink.get();
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::move(sink));
  SeriesPipeline pipeline(std::move(config), std::move(sinks));
  PipelineRun run;
  run.report = pipeline.run();
  run.events = recorded->events();
  return run;
}

// A watch of `config`'s logdir (polling every 20 ms unless the config chose its poll) on a
// thread of its own, its events recorded; stop() ends it and gives its report.
class Watch {
 public:
  explicit Watch(PipelineConfig config) {
    config.follow = true;
    if (!config.poll_interval_chosen) config.poll_interval = std::chrono::milliseconds(20);
    auto sink = std::make_unique<RecordingSink>();
    recorded_ = sink.get();
    std::vector<std::unique_ptr<Sink>> sinks;
    sinks.push_back(std::move(sink));
    pipeline_ = std::make_unique<SeriesPipeline>(std::move(config), std::move(sinks));
    runner_ = std::thread([this] { report_ = pipeline_->run(); });
  }
  ~Watch() {
    if (runner_.joinable()) stop();
  }
  const RecordingSink& recorded() const { return *recorded_; }
  // Values the watch has read so far (its progress after its latest look).
  std::int64_t progress_values() const { return pipeline_->progress().values; }
  SeriesReport stop() {
    pipeline_->request_stop();
    runner_.join();
    return report_;
  }

 private:
  RecordingSink* recorded_ = nullptr;
  std::unique_ptr<SeriesPipeline> pipeline_;
  SeriesReport report_;
  std::thread runner_;
};

std::vector<std::string> fired(const std::vector<RuleEvent>& events) {
  std::vector<std::string> out;
  for (const auto& event : events) {
    if (event.kind != RuleEvent::Kind::ConditionMet) continue;
    out.push_back(event.rule + "@" + std::to_string(event.global_step) + " " +
                  (event.tensors.empty() ? std::string() : event.tensors.front()));
  }
  return out;
}

// Events grouped by run (the run's name leads the series' name), each run's kept in order.
std::vector<std::string> in_run_order(std::vector<std::string> lines) {
  const auto run_of_line = [](const std::string& line) {
    const auto name = line.substr(line.find(' ') + 1);
    const auto colon = name.find(": ");
    return colon == std::string::npos ? std::string() : name.substr(0, colon);
  };
  std::stable_sort(lines.begin(), lines.end(),
                   [&](const auto& a, const auto& b) { return run_of_line(a) < run_of_line(b); });
  return lines;
}

TEST(SeriesPipelineTest, ADivergingRunFiresWhereTheCurveSaysSo) {
  TempDir dir;
  write_diverging(dir.path());
  const PipelineRun run = run_pipeline(config_for(
      dir.path(), {"NonFinite", "LossSpike", "LossNotDecreasing"}, {{"num_steps", "100"}}));
  // LossNotDecreasing compares each series every 100 steps: the validation loss stays at 1.5
  // (fires at 100, 200, 300, 400); the train loss falls 0.1 in 100 steps (5%) until step 400,
  // where 1e10 did not fall from step 300's 1.7. LossSpike: 1e10 is far above ~1.7. NonFinite:
  // the NaN at 410.
  // Each run's events in its order; the two runs, read at once, may interleave.
  EXPECT_EQ(in_run_order(fired(run.events)),
            (std::vector<std::string>{
                "LossSpike@400 train: epoch_loss", "LossNotDecreasing@400 train: epoch_loss",
                "NonFinite@410 train: epoch_loss", "LossNotDecreasing@100 validation: epoch_loss",
                "LossNotDecreasing@200 validation: epoch_loss",
                "LossNotDecreasing@300 validation: epoch_loss",
                "LossNotDecreasing@400 validation: epoch_loss"}));
  ASSERT_EQ(run.report.statuses.size(), 3U);
  for (const auto& status : run.report.statuses) {
    EXPECT_EQ(status.status, RuleStatus::IssuesFound) << status.rule;
  }
  EXPECT_EQ(run.report.values, 84);
  EXPECT_EQ(run.report.runs, 2U);
  EXPECT_EQ(run.report.conditions_met, 7);
}

TEST(SeriesPipelineTest, EachRunsEventsComeInItsOrderAtAnyThreadCount) {
  TempDir dir;
  for (int run = 0; run < 6; ++run) write_diverging(dir.path() / ("job" + std::to_string(run)));
  auto one = config_for(dir.path(), {"NonFinite", "LossSpike"});
  one.threads = 1;
  auto two = one;
  two.threads = 2;
  // Runs read at the same time interleave; each run's own events keep their order.
  const auto by_run = [](const std::vector<RuleEvent>& events) {
    std::map<std::string, std::vector<std::string>> runs;
    for (const auto& line : fired(events)) runs[line.substr(line.find(' ') + 1)].push_back(line);
    return runs;
  };
  const auto first = by_run(run_pipeline(one).events);
  EXPECT_EQ(first.size(), 6U);
  for (const auto& [run, lines] : first) {
    EXPECT_EQ(lines, (std::vector<std::string>{"LossSpike@400 " + run, "NonFinite@410 " + run}));
  }
  EXPECT_EQ(by_run(run_pipeline(two).events), first);
}

// A sink that throws (a plugin's, broken) on a TensorBoard job, as on an smdebug one: the
// ledger reports and counts it, and the job, its other sink and its statuses go on.
TEST(SeriesPipelineTest, ASinkThatThrowsIsAProblemNotTheEndOfTheJob) {
  class ThrowingSink final : public Sink {
   public:
    std::string describe() const override { return "throwing"; }
    void write(const RuleEvent&) override { throw std::runtime_error("cannot deliver"); }
    void flush() override {}
  };
  TempDir dir;
  write_diverging(dir.path());
  auto recording = std::make_unique<RecordingSink>();
  RecordingSink* recorded = recording.get();
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::make_unique<ThrowingSink>());
  sinks.push_back(std::move(recording));
  SeriesPipeline pipeline(config_for(dir.path(), {"NonFinite"}), std::move(sinks));

  const SeriesReport report = pipeline.run();

  // NonFinite fires once (the NaN at step 410); the throwing sink refused it, the resolution of
  // its incident at the end, and the status.
  EXPECT_EQ(fired(recorded->events()), std::vector<std::string>{"NonFinite@410 train: epoch_loss"});
  ASSERT_EQ(report.statuses.size(), 1U);
  EXPECT_EQ(report.statuses[0].status, RuleStatus::IssuesFound);
  ASSERT_TRUE(recorded->status_of("NonFinite"));
  std::size_t refused = 0;
  for (const TrialProblem& problem : report.problems) {
    if (problem.message == "throwing: cannot deliver") ++refused;
  }
  EXPECT_EQ(refused, 3U);
}

TEST(SeriesPipelineTest, RulesThatCannotRunOrFindNothingEndInError) {
  TempDir dir;
  write_diverging(dir.path());
  const PipelineRun run =
      run_pipeline(config_for(dir.path(), {"DeadRelu", "GradNormSpike", "VanishingGradient"}));
  ASSERT_EQ(run.report.statuses.size(), 3U);
  EXPECT_EQ(run.report.statuses[0].status, RuleStatus::Error);
  EXPECT_THAT(run.report.statuses[0].message, HasSubstr("does not run on a TensorBoard logdir"));
  EXPECT_EQ(run.report.statuses[1].status, RuleStatus::Error);
  EXPECT_THAT(run.report.statuses[1].message, HasSubstr("no gradient_norm series"));
  EXPECT_EQ(run.report.statuses[2].status, RuleStatus::Error);
  EXPECT_THAT(run.report.statuses[2].message, HasSubstr("no gradient histograms"));
  EXPECT_TRUE(run.report.rule_errors);
}

TEST(SeriesPipelineTest, ABrokenFileIsAProblemAndTheRestIsJudged) {
  TempDir dir;
  write_diverging(dir.path());
  TensorBoardWriter broken(dir.path() / "train" / "events.out.tfevents.2.host");
  broken.add_scalar("epoch_loss", 420, 1.0F, 42);
  broken.append_raw("Traceback (most recent call last):\n");
  const PipelineRun run = run_pipeline(config_for(dir.path(), {"NonFinite"}));
  ASSERT_EQ(run.report.problems.size(), 1U);
  EXPECT_THAT(run.report.problems[0].message, HasSubstr("train/events.out.tfevents.2.host"));
  EXPECT_EQ(run.report.statuses.at(0).status, RuleStatus::IssuesFound);
}

// A corrupt record in the middle of a file ends that file, as in TensorBoard: the values after
// it were never judged, so silence is no all-clear (Error, as on an smdebug job), and a rule
// that fired on what was read says what was not.
TEST(SeriesPipelineTest, ACorruptRecordMidFileIsNoAllClear) {
  TempDir dir;
  const auto path = dir.path() / "events.out.tfevents.1.host";
  std::uintmax_t corrupt_at = 0;
  {
    TensorBoardWriter writer(path);
    for (int step = 0; step < 50; ++step) writer.add_scalar("loss", step, 1.0F, step);
    corrupt_at = std::filesystem::file_size(path);
    for (int step = 50; step < 100; ++step) writer.add_scalar("loss", step, 1.0F, step);
  }
  std::string bytes = testing::read_text_file(path);
  bytes[corrupt_at + 20] ^= 0x5a;  // inside record 50's payload: its data checksum fails
  testing::write_text_file(path, bytes);

  const PipelineRun silent = run_pipeline(config_for(dir.path(), {"NonFinite"}));
  ASSERT_EQ(silent.report.statuses.size(), 1U);
  EXPECT_EQ(silent.report.statuses[0].status, RuleStatus::Error);
  EXPECT_THAT(silent.report.statuses[0].message,
              HasSubstr("could not read all of the logdir: 1 problem lost values (first, "
                        "events.out.tfevents.1.host: record at offset " +
                        std::to_string(corrupt_at)));
  EXPECT_TRUE(silent.report.rule_errors);
  EXPECT_EQ(silent.report.values, 50);

  // A NaN before the corruption: found, and the status still says what was not read.
  {
    TensorBoardWriter second(dir.path() / "events.out.tfevents.0.host");
    second.add_scalar("loss", 0, std::nanf(""), 0);
  }
  const PipelineRun fired_run = run_pipeline(config_for(dir.path(), {"NonFinite"}));
  EXPECT_EQ(fired_run.report.statuses.at(0).status, RuleStatus::IssuesFound);
  EXPECT_THAT(fired_run.report.statuses[0].message, HasSubstr("could not read all of the logdir"));
}

// A record larger than the memory budget is not read whole into a window as large as it: its
// file ends there with a problem, and silence is no all-clear.
TEST(SeriesPipelineTest, ARecordLargerThanTheMemoryBudgetEndsItsFile) {
  TempDir dir;
  {
    TensorBoardWriter writer(dir.path() / "events.out.tfevents.1.host");
    writer.add_scalar("loss", 0, 1.0F, 0);
    writer.add_scalar(std::string(100'000, 'x'), 1, 1.0F, 1);  // a record of about 100 KB
    writer.add_scalar("loss", 2, std::nanf(""), 2);
  }
  PipelineConfig config = config_for(dir.path(), {"NonFinite"});
  config.max_memory = 64 << 10;
  const PipelineRun run = run_pipeline(config);
  EXPECT_EQ(run.report.values, 1);
  ASSERT_EQ(run.report.problems.size(), 1U);
  EXPECT_THAT(run.report.problems[0].message,
              HasSubstr("a record larger than the memory budget of 65536 bytes"));
  EXPECT_EQ(run.report.statuses.at(0).status, RuleStatus::Error);

  config.max_memory = 1 << 20;  // within a budget that holds it, the NaN after it is found
  EXPECT_EQ(run_pipeline(config).report.statuses.at(0).status, RuleStatus::IssuesFound);
}

// A file that merely ends inside its last record (a writer killed mid-write) loses nothing
// written whole: the rules' silence on the rest is an all-clear, and the problem is listed.
TEST(SeriesPipelineTest, AFileCutInsideItsLastRecordLosesNothingWrittenWhole) {
  TempDir dir;
  const auto path = dir.path() / "events.out.tfevents.1.host";
  {
    TensorBoardWriter writer(path);
    for (int step = 0; step < 10; ++step) writer.add_scalar("loss", step, 1.0F, step);
  }
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 3);
  const PipelineRun run = run_pipeline(config_for(dir.path(), {"NonFinite"}));
  EXPECT_EQ(run.report.values, 9);
  ASSERT_EQ(run.report.problems.size(), 1U);
  EXPECT_THAT(run.report.problems[0].message, HasSubstr("the file ends inside it"));
  EXPECT_EQ(run.report.statuses.at(0).status, RuleStatus::NoIssuesFound);
}

// An event file replaced under a running watch, by rename or by cutting and rewriting it, is
// read again from its start: the NaN the replacement holds is found, and a problem says the
// file was replaced.
TEST(SeriesPipelineTest, AFileReplacedUnderAWatchIsReadAgainFromItsStart) {
  for (const bool renamed : {true, false}) {
    SCOPED_TRACE(renamed ? "renamed over" : "cut and rewritten");
    TempDir dir;
    TempDir elsewhere;
    const auto path = dir.path() / "events.out.tfevents.1.host";
    {
      TensorBoardWriter writer(path);
      for (int step = 0; step < 100; ++step) writer.add_scalar("loss", step, 1.0F, step);
    }
    Watch watch(config_for(dir.path(), {"NonFinite"}));
    ASSERT_TRUE(testing::eventually([&] { return watch.progress_values() == 100; },
                                    std::chrono::seconds(10)));
    const auto replacement = elsewhere.path() / "replacement";
    {
      TensorBoardWriter writer(replacement);
      for (int step = 0; step < 50; ++step) writer.add_scalar("loss", step, 5.0F, step);
      writer.add_scalar("loss", 50, std::nanf(""), 50);
    }
    if (renamed) {
      std::filesystem::rename(replacement, path);
    } else {
      testing::write_text_file(path,
                               testing::read_text_file(replacement));  // truncates, then writes
    }
    const bool found = testing::eventually(
        [&] { return !fired(watch.recorded().events()).empty(); }, std::chrono::seconds(10));
    const SeriesReport report = watch.stop();
    ASSERT_TRUE(found);
    EXPECT_EQ(fired(watch.recorded().events()), std::vector<std::string>{"NonFinite@50 loss"});
    ASSERT_EQ(report.problems.size(), 1U);
    EXPECT_THAT(report.problems[0].message,
                HasSubstr(renamed ? "replaced by another file" : "shorter than the"));
    EXPECT_EQ(report.values, 151);
  }
}

// A replay stopped before it read its runs (Ctrl-C) judged nothing: its rules say so (Error,
// "interrupted"), never NoIssuesFound.
TEST(SeriesPipelineTest, AReplayStoppedBeforeItsEndIsNoAllClear) {
  TempDir dir;
  write_diverging(dir.path());
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::make_unique<RecordingSink>());
  SeriesPipeline pipeline(config_for(dir.path(), {"NonFinite", "LossSpike"}), std::move(sinks));
  pipeline.request_stop();
  const SeriesReport report = pipeline.run();
  EXPECT_TRUE(report.interrupted);
  ASSERT_EQ(report.statuses.size(), 2U);
  for (const RuleEvent& status : report.statuses) {
    EXPECT_EQ(status.status, RuleStatus::Error) << status.rule;
    EXPECT_THAT(status.message, HasSubstr("interrupted: not read to the end"));
  }
}

TEST(SeriesPipelineTest, AWatchFollowsFilesAsTheyGrow) {
  TempDir dir;
  Watch watch(config_for(dir.path(), {"LossSpike"}));
  {
    TensorBoardWriter writer(dir.path() / "events.out.tfevents.1.host");
    for (int step = 0; step < 30; ++step) writer.add_scalar("loss", step, 1.0F, step);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_TRUE(fired(watch.recorded().events()).empty());
    writer.add_scalar("loss", 30, 50.0F, 30);  // the spike, appended to the open file
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (fired(watch.recorded().events()).empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const SeriesReport report = watch.stop();
  EXPECT_EQ(fired(watch.recorded().events()), std::vector<std::string>{"LossSpike@30 loss"});
  ASSERT_EQ(report.statuses.size(), 1U);
  EXPECT_EQ(report.statuses[0].status, RuleStatus::IssuesFound);
  EXPECT_EQ(report.values, 31);
}

// A watch of a local logdir reads what its source announces (inotify), not what a poll finds:
// with a poll of an hour, a run that appears after the watch began and the records appended
// to it are judged as they land.
TEST(SeriesPipelineTest, AWatchOfALocalLogdirReadsRecordsAsTheyLandNotAtItsPoll) {
  TempDir dir;
  auto config = config_for(dir.path(), {"LossSpike"});
  config.follow = true;
  config.poll_interval = std::chrono::hours(1);
  config.poll_interval_chosen = true;  // no rescan within the test either
  Watch watch(std::move(config));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the watch has begun
  {
    TensorBoardWriter writer(dir.path() / "runs" / "late" / "events.out.tfevents.1.host");
    for (int step = 0; step < 30; ++step) writer.add_scalar("loss", step, 1.0F, step);
    writer.add_scalar("loss", 30, 50.0F, 30);  // the spike
  }
  const bool fired_in_time = testing::eventually(
      [&] { return !fired(watch.recorded().events()).empty(); }, std::chrono::seconds(10));
  const SeriesReport report = watch.stop();
  ASSERT_TRUE(fired_in_time);
  EXPECT_EQ(fired(watch.recorded().events()),
            std::vector<std::string>{"LossSpike@30 runs/late: loss"});
  EXPECT_EQ(report.values, 31);
  EXPECT_EQ(report.runs, 1U);
  EXPECT_EQ(report.files, 1U);
  ASSERT_EQ(report.statuses.size(), 1U);
  EXPECT_EQ(report.statuses[0].status, RuleStatus::IssuesFound);
}

TEST(SeriesPipelineTest, HistogramRulesJudgeGradientsAndVariances) {
  // grad/fc1: gradients of +-1e-3 for 5 steps, then +-1e-9 (vanished); fc1/weight: values of
  // +-1 (variance 1), then +-10 (variance 100) at step 7, then NaN among them at step 8.
  TempDir dir;
  {
    TensorBoardWriter writer(dir.path() / "events.out.tfevents.1.host");
    for (int step = 0; step < 10; ++step) {
      const float gradient = step < 5 ? 1e-3F : 1e-9F;
      const std::vector<float> gradients{gradient, -gradient, gradient, -gradient};
      writer.add_histogram("grad/fc1", step, gradients, step);
      const float weight = step == 7 ? 10.0F : 1.0F;
      std::vector<float> weights{weight, -weight, weight, -weight};
      if (step == 8) weights[1] = std::nanf("");
      writer.add_histogram("fc1/weight", step, weights, step);
    }
  }
  auto config = config_for(dir.path(), {"VanishingGradient", "TensorVariance", "ExplodingTensor"});
  config.rules[1].parameters = {{"max_threshold", "50"}};
  const PipelineRun run = run_pipeline(config);
  EXPECT_EQ(
      fired(run.events),
      (std::vector<std::string>{
          "VanishingGradient@5 grad/fc1 (abs_mean)", "VanishingGradient@6 grad/fc1 (abs_mean)",
          "VanishingGradient@7 grad/fc1 (abs_mean)", "TensorVariance@7 fc1/weight (variance)",
          "VanishingGradient@8 grad/fc1 (abs_mean)", "ExplodingTensor@8 fc1/weight (sum)",
          "VanishingGradient@9 grad/fc1 (abs_mean)"}));
  ASSERT_EQ(run.report.statuses.size(), 3U);
  for (const auto& status : run.report.statuses) {
    EXPECT_EQ(status.status, RuleStatus::IssuesFound) << status.rule << ": " << status.message;
  }
  EXPECT_EQ(run.report.values, 20);
}

TEST(SeriesPipelineTest, TheRulesFileCanRenameTheLoss) {
  // A loss logged as "objective": not a loss by the default names, one by the rules file's.
  TempDir dir;
  {
    TensorBoardWriter writer(dir.path() / "events.out.tfevents.1.host");
    for (int step = 0; step < 30; ++step) writer.add_scalar("objective", step, 1.0F, step);
    writer.add_scalar("objective", 30, 50.0F, 30);
  }
  auto config = config_for(dir.path(), {"LossSpike"});
  EXPECT_EQ(run_pipeline(config).report.statuses.at(0).status, RuleStatus::Error);
  config.tensorboard_names = {{"loss", {"^objective$"}}};
  const PipelineRun renamed = run_pipeline(config);
  EXPECT_EQ(fired(renamed.events), std::vector<std::string>{"LossSpike@30 objective"});
}

TEST(SeriesPipelineTest, AWatchSaysOnceWhichRulesHaveNothingToJudgeYet) {
  TempDir dir;
  {
    TensorBoardWriter writer(dir.path() / "events.out.tfevents.1.host");
    writer.add_scalar("accuracy", 0, 0.5F, 0.0);
  }
  auto config = config_for(dir.path(), {"LossSpike", "DeadRelu", "NonFinite"});
  config.follow = true;
  config.poll_interval = std::chrono::milliseconds(20);
  SeriesPipeline pipeline(std::move(config), {});
  std::mutex mutex;
  std::vector<std::string> notices;
  pipeline.on_notice([&](const std::string& line) {
    const std::lock_guard lock(mutex);
    notices.push_back(line);
  });
  std::thread runner([&] { pipeline.run(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // several polls
  pipeline.request_stop();
  runner.join();
  ASSERT_EQ(notices.size(), 2U);  // once each, NonFinite has the accuracy to judge
  EXPECT_THAT(notices[0], HasSubstr("LossSpike: nothing to judge in"));
  EXPECT_THAT(notices[0], HasSubstr("loss series"));
  EXPECT_THAT(notices[1], HasSubstr("DeadRelu: reads smdebug tensors"));
}

TEST(SeriesPipelineTest, StalledTrainingFiresAtTheStepAfterAGapInWallTime) {
  // Run "a": steps 0..9 a second apart, then step 10 two hours later. Run "b": no gap. Values
  // of two tags at each step: a step's first value counts, not each tag's.
  TempDir dir;
  for (const std::string run : {"a", "b"}) {
    TensorBoardWriter writer(dir.path() / run / "events.out.tfevents.1.host");
    for (int step = 0; step <= 10; ++step) {
      const double wall = run == "a" && step == 10 ? 7209.0 : step;
      writer.add_scalar("loss", step, 1.0F, wall);
      writer.add_scalar("accuracy", step, 0.5F, wall + 0.5);
    }
  }
  auto config = config_for(dir.path(), {"StalledTrainingRule"});
  config.rules[0].parameters = {{"threshold", "1800"}};
  const PipelineRun run = run_pipeline(config);
  ASSERT_EQ(run.report.conditions_met, 1);
  const RuleEvent& event = run.events.front();
  EXPECT_EQ(event.global_step, 10);
  EXPECT_THAT(event.message, HasSubstr("no new step for 7200 s in run a (after step 9"));
  EXPECT_EQ(run.report.statuses.at(0).status, RuleStatus::IssuesFound);
  EXPECT_EQ(run.report.statuses.at(0).steps_evaluated, 22);  // 11 steps in each run
}

TEST(SeriesPipelineTest, AWatchOfASilentLogdirFiresStalledTrainingOnce) {
  TempDir dir;
  {
    TensorBoardWriter writer(dir.path() / "events.out.tfevents.1.host");
    for (int step = 0; step < 5; ++step) writer.add_scalar("loss", step, 1.0F, step);
  }
  auto config = config_for(dir.path(), {"StalledTrainingRule"});
  config.rules[0].parameters = {{"threshold", "1"}};
  Watch watch(std::move(config));
  std::this_thread::sleep_for(std::chrono::milliseconds(1600));  // one silence, past 1 s
  const SeriesReport report = watch.stop();
  const auto events = fired(watch.recorded().events());
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].substr(0, events[0].find(' ')), "StalledTrainingRule@4");
  EXPECT_EQ(report.statuses.at(0).status, RuleStatus::IssuesFound);
}

TEST(SeriesPipelineTest, ARulesStopActionRunsOnceTheFirstTimeItFires) {
  // NaN in two series (steps 3 and 6): NonFinite fires twice; its command runs once, at the
  // first, with the rule and step in its environment.
  TempDir dir;
  {
    TensorBoardWriter writer(dir.path() / "events.out.tfevents.1.host");
    for (int step = 0; step < 8; ++step) {
      writer.add_scalar("train/loss", step, step == 3 ? std::nanf("") : 1.0F, step);
      writer.add_scalar("train/grad_norm", step, step == 6 ? std::nanf("") : 1.0F, step);
    }
  }
  const auto marker = dir.path() / "stopped";
  auto config = config_for(dir.path(), {"NonFinite"});
  config.rules[0].configuration_name = "nan";
  StopAction stop;
  stop.command =
      "echo \"$RULESTREAM_RULE_CONFIGURATION $RULESTREAM_STEP\" >> '" + marker.string() + "'";
  config.rules[0].stop_actions = {stop};
  const PipelineRun run = run_pipeline(std::move(config));
  EXPECT_EQ(fired(run.events).size(), 2U);
  EXPECT_EQ(testing::read_text_file(marker), "nan 3\n");
  EXPECT_EQ(run.report.statuses.at(0).status, RuleStatus::IssuesFound);
  EXPECT_THAT(run.report.statuses.at(0).message, HasSubstr("ran `echo"));
  EXPECT_TRUE(run.report.problems.empty());
}

TEST(SeriesPipelineTest, StopTrainingOnFireNeedsAStopActionAndUsesTheDefaultOne) {
  TempDir dir;
  {
    TensorBoardWriter writer(dir.path() / "events.out.tfevents.1.host");
    writer.add_scalar("loss", 0, 1.0F, 0.0);
    writer.add_scalar("loss", 1, 1.0F, 7200.0);  // two hours later: a stall
  }
  auto config = config_for(dir.path(), {"StalledTrainingRule"});
  config.rules[0].parameters = {{"threshold", "60"}, {"stop_training_on_fire", "True"}};
  try {
    SeriesPipeline refused(config, {});
    ADD_FAILURE() << "a rule asking to stop training with no stop action was accepted";
  } catch (const RuleConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("stop_training_on_fire is True, but no stop action"));
  }
  StopAction failing;
  failing.command = "exit 3";
  config.default_stop_actions = {failing};
  const PipelineRun run = run_pipeline(std::move(config));
  EXPECT_EQ(fired(run.events).size(), 1U);
  EXPECT_THAT(run.report.statuses.at(0).message, HasSubstr("exited with status 3"));
  ASSERT_EQ(run.report.problems.size(), 1U);  // a stop that failed is a problem too
  EXPECT_THAT(run.report.problems[0].message, HasSubstr("StalledTrainingRule"));
}

}  // namespace
}  // namespace rulestream
