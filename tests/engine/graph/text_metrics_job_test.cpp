// A folder of text metrics is a job like any other: detected by itself, opened by open_job,
// replayed and followed by the one series engine. A watch follows a CSV log that grows by rows
// and a trainer_state.json rewritten at each checkpoint as they are written; rules on time judge
// the time columns a log holds, and say so when it holds none.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "engine/graph/job.hpp"
#include "engine/graph/trial_presence.hpp"
#include "sources/open/storage_factory.hpp"
#include "tests/support/recording_sink.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::RecordingSink;
using testing::TempDir;

PipelineConfig config_for(const std::filesystem::path& folder,
                          const std::vector<std::string>& rules) {
  PipelineConfig config;
  config.paths = {folder.string()};
  for (const auto& rule : rules) config.rules.push_back({.configuration_name = rule, .rule = rule});
  return config;
}

// A job of the folder, its events recorded; run() on a thread of its own for a watch.
class TextMetricsJob {
 public:
  explicit TextMetricsJob(PipelineConfig config) {
    auto sink = std::make_unique<RecordingSink>();
    recorded_ = sink.get();
    std::vector<std::unique_ptr<Sink>> sinks;
    sinks.push_back(std::move(sink));
    job_ = open_job(std::move(config), std::move(sinks), TrialFormat::TextMetrics);
  }
  ~TextMetricsJob() {
    if (runner_.joinable()) stop();
  }
  JobOutcome replay() { return job_->run(); }
  void start() {
    runner_ = std::thread([this] { outcome_ = job_->run(); });
  }
  JobOutcome stop() {
    job_->request_stop();
    runner_.join();
    return outcome_;
  }
  const RecordingSink& recorded() const { return *recorded_; }
  std::int64_t values_read() const { return job_->progress().values; }

 private:
  RecordingSink* recorded_ = nullptr;
  std::unique_ptr<Job> job_;
  JobOutcome outcome_;
  std::thread runner_;
};

void append(const std::filesystem::path& file, std::string_view text) {
  std::ofstream out(file, std::ios::app | std::ios::binary);
  out << text;
}

TEST(TextMetricsJob, AFolderOfTextLogsIsDetectedByItself) {
  TempDir dir;
  const auto format_of = [&] {
    return detect_format(*open_storage(dir.path().string(), StorageOptions{}));
  };
  EXPECT_EQ(format_of(), std::nullopt);
  std::filesystem::create_directories(dir.path() / "out" / "checkpoint-10");
  testing::write_text_file(dir.path() / "out" / "checkpoint-10" / "trainer_state.json", "{}");
  EXPECT_EQ(format_of(), TrialFormat::TextMetrics);
  // Event files beside them (Lightning with its TensorBoard and CSV loggers): a logdir, so the
  // same values are not judged twice.
  testing::write_text_file(dir.path() / "events.out.tfevents.1.host", "");
  EXPECT_EQ(format_of(), TrialFormat::TensorBoard);
}

TEST(TextMetricsJob, AWatchFollowsACsvLogAsItsRowsLand) {
  TempDir dir;
  const auto log = dir.path() / "lightning_logs" / "version_0" / "metrics.csv";
  std::filesystem::create_directories(log.parent_path());
  testing::write_text_file(log, "epoch,step,train_loss\n0,0,2.5\n0,1,2.25\n");
  auto config = config_for(dir.path(), {"NonFinite"});
  config.follow = true;
  config.poll_interval = std::chrono::hours(1);  // what lands is read when inotify says so
  config.poll_interval_chosen = true;
  TextMetricsJob job(std::move(config));
  job.start();
  ASSERT_TRUE(testing::eventually([&] { return job.values_read() == 4; },
                                  std::chrono::seconds(10)));  // 2 rows x (epoch, train_loss)
  append(log, "0,2,2.0");                                      // a row being written: nothing yet
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(job.values_read(), 4);
  append(log, "5\n1,3,nan\n");
  const bool fired = testing::eventually(
      [&] { return !job.recorded().steps_fired("NonFinite").empty(); }, std::chrono::seconds(10));
  const JobOutcome outcome = job.stop();
  ASSERT_TRUE(fired);
  EXPECT_EQ(job.recorded().steps_fired("NonFinite"), std::vector<std::int64_t>{3});
  ASSERT_EQ(outcome.statuses.size(), 1U);
  EXPECT_EQ(outcome.statuses[0].status, RuleStatus::IssuesFound);
  EXPECT_EQ(job.values_read(), 8);
  EXPECT_TRUE(outcome.problems.empty());
}

// A trainer_state.json of log_history entries at steps first..last, its loss `loss(step)`.
std::string trainer_state(int last, double nan_step) {
  std::string entries;
  for (int step = 1; step <= last; ++step) {
    if (!entries.empty()) entries += ",\n";
    entries += "    {\"epoch\": " + std::to_string(step) + ".0, \"loss\": " +
               (step == nan_step ? std::string("NaN") : std::to_string(1.0 / step)) +
               ", \"step\": " + std::to_string(step) + "}";
  }
  return "{\n  \"global_step\": " + std::to_string(last) + ",\n  \"log_history\": [\n" + entries +
         "\n  ]\n}\n";
}

TEST(TextMetricsJob, AWatchTakesEachNewCheckpointsStepsOnce) {
  TempDir dir;
  const auto checkpoint = [&](int step) {
    const auto folder = dir.path() / ("checkpoint-" + std::to_string(step));
    std::filesystem::create_directories(folder);
    return folder / "trainer_state.json";
  };
  testing::write_text_file(checkpoint(2), trainer_state(2, -1));
  auto config = config_for(dir.path(), {"NonFinite"});
  config.follow = true;
  config.poll_interval = std::chrono::hours(1);
  config.poll_interval_chosen = true;
  TextMetricsJob job(std::move(config));
  job.start();
  ASSERT_TRUE(testing::eventually([&] { return job.values_read() == 4; },
                                  std::chrono::seconds(10)));  // steps 1, 2 x (epoch, loss)
  // The next checkpoint holds the whole history again, with a NaN loss at its new step 3.
  testing::write_text_file(checkpoint(4), trainer_state(4, 3));
  ASSERT_TRUE(
      testing::eventually([&] { return job.values_read() == 8; }, std::chrono::seconds(10)));
  const JobOutcome outcome = job.stop();
  EXPECT_EQ(job.recorded().steps_fired("NonFinite"), std::vector<std::int64_t>{3});
  EXPECT_EQ(job.values_read(), 8);  // steps 1 and 2 were not taken twice
  EXPECT_TRUE(outcome.problems.empty());
}

TEST(TextMetricsJob, RulesOnTimeJudgeTheTimeColumnAndSayWhenThereIsNone) {
  // stable-baselines3's progress.csv: time/time_elapsed is the seconds since the start. Steps
  // 2048 apart, 10 s apart, except a 400 s gap before step 6 x 2048 = 12288: StalledTraining's
  // threshold of 300 s fires there, at 12288 (the first step after the gap).
  TempDir dir;
  std::string csv = "time/time_elapsed,time/total_timesteps,train/loss\n";
  double elapsed = 0.0;
  for (int i = 1; i <= 8; ++i) {
    elapsed += i == 6 ? 400.0 : 10.0;
    csv += std::to_string(elapsed) + "," + std::to_string(2048 * i) + ",0.5\n";
  }
  testing::write_text_file(dir.path() / "progress.csv", csv);
  auto config = config_for(dir.path(), {"StalledTrainingRule"});
  config.rules[0].parameters = {{"threshold", "300"}};
  TextMetricsJob job(config);
  const JobOutcome outcome = job.replay();
  EXPECT_EQ(job.recorded().steps_fired("StalledTrainingRule"), std::vector<std::int64_t>{12288});
  ASSERT_EQ(outcome.statuses.size(), 1U);
  EXPECT_EQ(outcome.statuses[0].status, RuleStatus::IssuesFound);

  // Without a time column there is no time to judge: no all-clear.
  TempDir untimed;
  testing::write_text_file(untimed.path() / "metrics.csv", "step,loss\n1,0.5\n2,0.4\n");
  TextMetricsJob blind(config_for(untimed.path(), {"StalledTrainingRule"}));
  const JobOutcome judged = blind.replay();
  ASSERT_EQ(judged.statuses.size(), 1U);
  EXPECT_NE(judged.statuses[0].status, RuleStatus::NoIssuesFound) << judged.statuses[0].message;
  EXPECT_TRUE(blind.recorded().steps_fired("StalledTrainingRule").empty());
}

// stable-baselines3's PPO logs its last minibatch's loss, which jumps tenfold between updates as
// the returns (and the value loss with them) grow: no divergence in an RL job, whose losses no
// rule expects to fall (docs/tensorboard.md). The same column without the rollout/ columns is a
// supervised loss, and its tenfold jump at its second value is Divergence's: best 0.2 at step
// 2048, early threshold 4 x 0.2 = 0.8, and 3.0 >= 10 x 0.2 needs no confirmation. NonFinite
// judges the RL loss as any other.
TEST(TextMetricsJob, AnRlJobsLossesAreNotJudgedAsSupervisedOnes) {
  const std::vector<double> losses{0.2, 3.0, 1.1, 2.8, 0.34, 9.0, 0.6, 20.0, 0.66};
  const auto progress_csv = [&](bool reinforcement, bool nan_at_end) {
    std::string csv = reinforcement ? "rollout/ep_rew_mean,time/total_timesteps,train/loss\n"
                                    : "time/total_timesteps,train/loss\n";
    std::int64_t step = 1024;
    const auto row = [&](const std::string& loss) {
      csv += (reinforcement ? std::to_string(20 + step / 512) + "," : std::string()) +
             std::to_string(step) + "," + loss + "\n";
      step += 1024;
    };
    row("");  // SB3's first row: a rollout, no update yet
    for (const double loss : losses) row(std::to_string(loss));
    if (nan_at_end) row("nan");
    return csv;
  };
  const std::vector<std::string> rules{"Divergence", "NonFinite"};
  for (const bool reinforcement : {true, false}) {
    TempDir dir;
    testing::write_text_file(dir.path() / "progress.csv", progress_csv(reinforcement, true));
    TextMetricsJob job(config_for(dir.path(), rules));
    const JobOutcome outcome = job.replay();
    std::vector<std::pair<std::string, std::int64_t>> fired;
    for (const RuleEvent& event : job.recorded().events()) {
      if (event.kind == RuleEvent::Kind::ConditionMet) {
        fired.emplace_back(event.rule, event.global_step);
      }
    }
    const std::int64_t nan_step = 1024 * static_cast<std::int64_t>(losses.size() + 2);
    if (reinforcement) {
      EXPECT_EQ(fired,
                (std::vector<std::pair<std::string, std::int64_t>>{{"NonFinite", nan_step}}));
      // Named, Divergence says why it judged nothing, and how to judge the losses anyway.
      ASSERT_EQ(outcome.statuses.size(), 2U);
      EXPECT_EQ(outcome.statuses[0].status, RuleStatus::Error);
      EXPECT_NE(outcome.statuses[0].message.find("1 loss series are a reinforcement-learning"),
                std::string::npos)
          << outcome.statuses[0].message;
    } else {
      ASSERT_FALSE(fired.empty());
      EXPECT_EQ(fired.front(), (std::pair<std::string, std::int64_t>{"Divergence", 3072}));
      EXPECT_EQ(fired.back(), (std::pair<std::string, std::int64_t>{"NonFinite", nan_step}));
    }
  }
}

}  // namespace
}  // namespace rulestream
