// Text metrics read as their writers write them: CSV logs and JSON lines that grow by rows (and
// are read the same whether read whole or as they were written), a header rewritten with new
// columns, trainer_state.json rewritten at each checkpoint, in windows smaller than an entry.
// Every expected value below is written in the file text beside it.

#include "stages/metrics/metrics_run_loader.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "sources/open/storage_factory.hpp"
#include "stages/metrics/metrics_runs.hpp"
#include "stages/series/series_reader.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

struct Value {
  std::int64_t step = 0;
  double time = 0.0;
  double value = 0.0;
  bool operator==(const Value& other) const {
    const auto same = [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); };
    return step == other.step && same(time, other.time) && same(value, other.value);
  }
};

std::ostream& operator<<(std::ostream& out, const Value& value) {
  return out << "(" << value.step << ", " << value.time << ", " << value.value << ")";
}

// Every value by run, then tag, in the order read.
class Collected final : public SeriesValueSink {
 public:
  void on_value(const SeriesTag& tag, std::int64_t step, double wall_time,
                const SummaryReading& reading) override {
    EXPECT_EQ(reading.kind, TagKind::Scalar);
    values[tag.run][tag.name].push_back({step, wall_time, reading.scalar});
  }
  std::map<std::string, std::map<std::string, std::vector<Value>>> values;
};

constexpr double kNoTime = std::numeric_limits<double>::quiet_NaN();
using Values = std::vector<Value>;

class MetricsFolder : public ::testing::Test {
 protected:
  std::shared_ptr<const Storage> storage() const {
    return open_storage(dir_.path().string(), StorageOptions{});
  }
  void write(const std::string& path, std::string_view text) {
    std::filesystem::create_directories((dir_.path() / path).parent_path());
    testing::write_text_file(dir_.path() / path, text);
  }
  StoredObject listed(const std::string& path) const {
    for (const StoredObject& object : storage()->list("")) {
      if (object.path == path) return object;
    }
    ADD_FAILURE() << path << " is not listed";
    return {};
  }
  // The whole folder read once, as a replay reads it.
  SeriesJobRead replay(Collected& collected, std::uint64_t window = std::uint64_t{16} << 20) const {
    return read_series_job(*storage(), collected, {.window_bytes = window},
                           text_metrics_series_format());
  }
  // `path` read as a watch reads it: as it is now, more may come.
  void look(MetricsRunLoader& loader, const std::string& path, Collected& collected,
            std::vector<SeriesProblem>& problems, bool final_size = false,
            std::uint64_t window = std::uint64_t{16} << 20) const {
    read_run_file(*storage(), listed(path), loader, collected, final_size, {.window_bytes = window},
                  problems);
  }

  testing::TempDir dir_;
};

TEST_F(MetricsFolder, ACsvLogIsReadByItsStepAndTimeColumns) {
  // stable-baselines3's progress.csv: the step is time/total_timesteps, the time is the seconds
  // since the start (time/time_elapsed); every other column is a series.
  write("sb3/progress.csv",
        "time/fps,time/iterations,time/time_elapsed,time/total_timesteps,train/loss\n"
        "1000,1,2,2048,\n"
        "1010,2,4,4096,0.5\n");
  Collected collected;
  const SeriesJobRead read = replay(collected);
  EXPECT_EQ(read.runs, std::vector<std::string>{"sb3/progress.csv"});
  EXPECT_TRUE(read.problems.empty());
  const auto& tags = collected.values["sb3/progress.csv"];
  EXPECT_EQ(tags.size(), 3U);  // fps, iterations, loss
  EXPECT_EQ(tags.at("time/fps"), (Values{{2048, 2.0, 1000.0}, {4096, 4.0, 1010.0}}));
  EXPECT_EQ(tags.at("time/iterations"), (Values{{2048, 2.0, 1.0}, {4096, 4.0, 2.0}}));
  EXPECT_EQ(tags.at("train/loss"), (Values{{4096, 4.0, 0.5}}));  // its empty cell is no value
}

TEST_F(MetricsFolder, PaddedHeadersNonFiniteSpellingsAndAbsoluteTimes) {
  // Ultralytics before 8.1 padded its header and cells with spaces.
  write("yolo/results.csv",
        "                  epoch,      train/box_loss,    metrics/mAP50(B),          timestamp\n"
        "                      0,              1.2345,                 nan,       1700000000.5\n"
        "                      1,                -inf,              0.4321,       1700000060.5\n");
  Collected collected;
  replay(collected);
  const auto& tags = collected.values["yolo/results.csv"];
  ASSERT_EQ(tags.size(), 2U);
  EXPECT_EQ(tags.at("train/box_loss"),
            (Values{{0, 1700000000.5, 1.2345},
                    {1, 1700000060.5, -std::numeric_limits<double>::infinity()}}));
  EXPECT_EQ(tags.at("metrics/mAP50(B)"),
            (Values{{0, 1700000000.5, kNoTime}, {1, 1700000060.5, 0.4321}}));
}

TEST_F(MetricsFolder, ACsvWithoutAStepColumnIsNoMetricsFile) {
  write("data/table.csv", "a,b\n1,2\n");
  write("log.csv", "step,loss\n,1.0\n2,0.5\nx,0.25\n");
  Collected collected;
  const SeriesJobRead read = replay(collected);
  ASSERT_EQ(read.problems.size(), 3U);
  EXPECT_NE(read.problems[0].message.find("data/table.csv: no column is a step"),
            std::string::npos);
  EXPECT_FALSE(read.problems[0].values_lost);
  // Rows whose step is no whole number lose their values: said, and no all-clear.
  EXPECT_NE(read.problems[1].message.find("log.csv: at offset 10: a row with no whole number"),
            std::string::npos)
      << read.problems[1].message;
  EXPECT_TRUE(read.problems[1].values_lost);
  EXPECT_NE(read.problems[2].message.find("at offset 21"), std::string::npos);
  EXPECT_EQ(collected.values["log.csv"]["loss"], (Values{{2, kNoTime, 0.5}}));
  EXPECT_TRUE(collected.values["data/table.csv"].empty());
}

TEST_F(MetricsFolder, ACsvReadAsItIsWrittenGivesWhatAReplayGives) {
  const std::string text =
      "epoch,step,train_loss,val_loss,note\n"
      "0,0,2.5,,\"a, b\"\n"
      "0,1,2.25,,x\n"
      "0,2,2.0,2.75,\n"
      "1,3,NaN,,\n"
      "1,4,1.5,2.5,\n";
  write("run/metrics.csv", text);
  Collected whole;
  replay(whole);
  ASSERT_EQ(whole.values["run/metrics.csv"]["val_loss"],
            (Values{{2, kNoTime, 2.75}, {4, kNoTime, 2.5}}));
  for (const std::size_t piece : {1, 3, 7, 16}) {
    MetricsRunLoader loader("run/metrics.csv");
    Collected growing;
    std::vector<SeriesProblem> problems;
    for (std::size_t size = piece; size < text.size() + piece; size += piece) {
      write("run/metrics.csv", std::string_view(text).substr(0, std::min(size, text.size())));
      look(loader, "run/metrics.csv", growing, problems);
    }
    EXPECT_EQ(growing.values, whole.values) << "written " << piece << " bytes at a time";
    EXPECT_TRUE(problems.empty());
    EXPECT_TRUE(loader.problems().empty());
  }
}

TEST_F(MetricsFolder, AHeaderRewrittenWithANewColumnIsNotReadTwice) {
  // Lightning's CSVLogger meets val_loss after the first epoch and rewrites the whole file under
  // the longer header, the rows before with an empty cell.
  write("v0/metrics.csv", "epoch,step,train_loss\n0,0,2.5\n0,1,2.25\n");
  MetricsRunLoader loader("v0/metrics.csv");
  Collected collected;
  std::vector<SeriesProblem> problems;
  look(loader, "v0/metrics.csv", collected, problems);
  write("v0/metrics.csv",
        "epoch,step,train_loss,val_loss\n0,0,2.5,\n0,1,2.25,\n0,1,,3.0\n1,2,2.0,\n");
  look(loader, "v0/metrics.csv", collected, problems);
  EXPECT_EQ(collected.values["v0/metrics.csv"]["train_loss"],
            (Values{{0, kNoTime, 2.5}, {1, kNoTime, 2.25}, {2, kNoTime, 2.0}}));
  EXPECT_EQ(collected.values["v0/metrics.csv"]["val_loss"], (Values{{1, kNoTime, 3.0}}));
  EXPECT_TRUE(problems.empty());
  EXPECT_TRUE(loader.problems().empty());

  // Another file under the name (a column gone): read again from its start, said.
  // (71 bytes: longer than the 68 read, so only its header tells.)
  write("v0/metrics.csv",
        "step,other\n0,1.0\n1,1.0\n2,1.0\n3,1.0\n4,1.0\n5,1.0\n6,1.0\n7,1.0\n8,1.0\n9,1.0\n");
  look(loader, "v0/metrics.csv", collected, problems);
  ASSERT_EQ(loader.problems().size(), 1U);
  EXPECT_NE(loader.problems()[0].message.find("its header changed"), std::string::npos)
      << loader.problems()[0].message;
  EXPECT_EQ(collected.values["v0/metrics.csv"]["other"].size(), 10U);
}

TEST_F(MetricsFolder, ALastRowCutShortWaitsInAWatchAndIsSaidInAReplay) {
  write("log.csv", "step,loss,acc\n0,1.0,0.5\n1,0.5");
  MetricsRunLoader loader("log.csv");
  Collected watched;
  std::vector<SeriesProblem> problems;
  look(loader, "log.csv", watched, problems);
  EXPECT_EQ(watched.values["log.csv"]["loss"], (Values{{0, kNoTime, 1.0}}));
  write("log.csv", "step,loss,acc\n0,1.0,0.5\n1,0.5,0.75\n");
  look(loader, "log.csv", watched, problems);
  EXPECT_EQ(watched.values["log.csv"]["acc"], (Values{{0, kNoTime, 0.5}, {1, kNoTime, 0.75}}));

  // A finished file whose last row has all its cells but no newline is read; one cut short is
  // said, and loses nothing written whole.
  write("log.csv", "step,loss,acc\n0,1.0,0.5\n1,0.5,0.75");
  Collected whole;
  EXPECT_TRUE(replay(whole).problems.empty());
  EXPECT_EQ(whole.values["log.csv"]["acc"].size(), 2U);
  write("log.csv", "step,loss,acc\n0,1.0,0.5\n1,0.5");
  Collected cut;
  const SeriesJobRead read = replay(cut);
  ASSERT_EQ(read.problems.size(), 1U);
  EXPECT_NE(read.problems[0].message.find("log.csv: at offset 24: the last row ends after 2 of 3"),
            std::string::npos)
      << read.problems[0].message;
  EXPECT_FALSE(read.problems[0].values_lost);
  EXPECT_EQ(cut.values["log.csv"]["loss"].size(), 1U);
}

TEST_F(MetricsFolder, JsonLinesOfTrainingAndValidation) {
  // OpenMMLab's vis_data/scalars.json: "time" is the seconds an iteration took, a series.
  const std::string text =
      R"({"lr": 0.01, "loss": 2.5, "time": 0.25, "epoch": 1, "iter": 10, "step": 10})"
      "\n"
      R"({"accuracy/top1": 41.5, "step": 1})"
      "\n"
      "this is no json\n"
      R"({"lr": 0.01, "loss": NaN, "time": 0.5, "epoch": 1, "iter": 20, "step": 20, "mode": "train"})"
      "\n";
  write("work/vis_data/scalars.json", text);
  Collected collected;
  const SeriesJobRead read = replay(collected);
  ASSERT_EQ(read.problems.size(), 1U);
  EXPECT_NE(read.problems[0].message.find("a line that is no JSON object"), std::string::npos);
  EXPECT_TRUE(read.problems[0].values_lost);
  const auto& tags = collected.values["work/vis_data/scalars.json"];
  EXPECT_EQ(tags.at("loss"), (Values{{10, kNoTime, 2.5}, {20, kNoTime, kNoTime}}));
  EXPECT_EQ(tags.at("time"), (Values{{10, kNoTime, 0.25}, {20, kNoTime, 0.5}}));
  EXPECT_EQ(tags.at("iter"), (Values{{10, kNoTime, 10.0}, {20, kNoTime, 20.0}}));
  // A line without OpenMMLab's `iter`, after lines with it, is a validation line.
  EXPECT_EQ(tags.at("val/accuracy/top1"), (Values{{1, kNoTime, 41.5}}));
  EXPECT_EQ(tags.count("accuracy/top1"), 0U);
  EXPECT_EQ(tags.count("mode"), 0U);  // a string is no value

  // Written a few bytes at a time, it reads the same.
  MetricsRunLoader loader("work/vis_data/scalars.json");
  Collected growing;
  std::vector<SeriesProblem> problems;
  for (std::size_t size = 5; size < text.size() + 5; size += 5) {
    write("work/vis_data/scalars.json",
          std::string_view(text).substr(0, std::min(size, text.size())));
    look(loader, "work/vis_data/scalars.json", growing, problems);
  }
  EXPECT_EQ(growing.values, collected.values);
}

// A trainer_state.json as Trainer writes it (json.dumps(indent=2, sort_keys=True)), with the
// log_history entries of steps 1..last (a loss at each, an eval_loss at every even step).
std::string trainer_state(int last, bool nan_at_3 = false) {
  std::string entries;
  for (int step = 1; step <= last; ++step) {
    if (!entries.empty()) entries += ",\n";
    const std::string loss = nan_at_3 && step == 3 ? "NaN" : std::to_string(10 - step) + ".5";
    entries += "    {\n      \"epoch\": " + std::to_string(step) + ".0,\n      \"grad_norm\": " +
               "1.25,\n      \"learning_rate\": 5e-05,\n      \"loss\": " + loss +
               ",\n      \"step\": " + std::to_string(step) + "\n    }";
    if (step % 2 == 0) {
      entries += ",\n    {\n      \"epoch\": " + std::to_string(step) +
                 ".0,\n      \"eval_loss\": 3.25,\n      \"eval_runtime\": 0.5,\n      \"step\": " +
                 std::to_string(step) + "\n    }";
    }
  }
  return "{\n  \"best_metric\": null,\n  \"epoch\": " + std::to_string(last) +
         ".0,\n  \"global_step\": " + std::to_string(last) +
         ",\n  \"is_hyper_param_search\": false,\n  \"log_history\": [\n" + entries +
         "\n  ],\n  \"stateful_callbacks\": {\"TrainerControl\": {\"args\": {\"should_save\": "
         "true}}},\n  \"train_batch_size\": 8\n}\n";
}

TEST_F(MetricsFolder, TrainerStateIsReadInWindowsSmallerThanAnEntry) {
  write("out/checkpoint-4/trainer_state.json", trainer_state(4, true));
  Collected whole;
  const SeriesJobRead read = replay(whole);
  EXPECT_TRUE(read.problems.empty());
  EXPECT_EQ(read.runs, std::vector<std::string>{"out/trainer_state.json"});
  const auto& tags = whole.values["out/trainer_state.json"];
  EXPECT_EQ(
      tags.at("loss"),
      (Values{{1, kNoTime, 9.5}, {2, kNoTime, 8.5}, {3, kNoTime, kNoTime}, {4, kNoTime, 6.5}}));
  EXPECT_EQ(tags.at("eval_loss"), (Values{{2, kNoTime, 3.25}, {4, kNoTime, 3.25}}));
  EXPECT_EQ(tags.at("epoch").size(), 4U);    // once a step: the eval entry's epoch is not taken
  EXPECT_EQ(tags.count("global_step"), 0U);  // members outside log_history are no series

  Collected windowed;
  EXPECT_TRUE(replay(windowed, 64).problems.empty());
  EXPECT_EQ(windowed.values, whole.values);
}

TEST_F(MetricsFolder, ARewrittenTrainerStateAddsOnlyTheStepsBeyond) {
  write("out/checkpoint-2/trainer_state.json", trainer_state(2));
  MetricsRunLoader loader("out/trainer_state.json");
  Collected collected;
  std::vector<SeriesProblem> problems;
  look(loader, "out/checkpoint-2/trainer_state.json", collected, problems);
  write("out/checkpoint-4/trainer_state.json", trainer_state(4));
  look(loader, "out/checkpoint-4/trainer_state.json", collected, problems);
  // The older checkpoint announced again adds nothing.
  look(loader, "out/checkpoint-2/trainer_state.json", collected, problems);
  // The file beside the checkpoints, rewritten at the end with two more steps.
  write("out/trainer_state.json", trainer_state(5));
  look(loader, "out/trainer_state.json", collected, problems);
  write("out/trainer_state.json", trainer_state(6));
  look(loader, "out/trainer_state.json", collected, problems);
  const auto& loss = collected.values["out/trainer_state.json"]["loss"];
  ASSERT_EQ(loss.size(), 6U);
  for (int step = 1; step <= 6; ++step) {
    EXPECT_EQ(loss[step - 1], (Value{step, kNoTime, 10 - step + 0.5}));
  }
  EXPECT_EQ(collected.values["out/trainer_state.json"]["eval_loss"].size(), 3U);  // 2, 4, 6
  EXPECT_TRUE(problems.empty());
  EXPECT_TRUE(loader.problems().empty());
}

TEST_F(MetricsFolder, ATrainerStateThatIsNoJsonIsSaid) {
  write("trainer_state.json",
        "{\n  \"log_history\": [\n    {\"loss\": 1.0, \"step\": 1},\n"
        "    {\"loss\": 2.0 \"step\": 2}\n  ]\n}\n");
  Collected collected;
  const SeriesJobRead read = replay(collected);
  ASSERT_EQ(read.problems.size(), 1U);
  // The fault: the quote of "step" (offset 68), in the second entry (offset 55).
  EXPECT_NE(read.problems[0].message.find("trainer_state.json: at offset 68: not the JSON of a "
                                          "trainer_state.json (no ',' between members)"),
            std::string::npos)
      << read.problems[0].message;
  EXPECT_TRUE(read.problems[0].values_lost);
  EXPECT_EQ(collected.values["trainer_state.json"]["loss"], (Values{{1, kNoTime, 1.0}}));
}

TEST(MetricsRuns, CheckpointsBelongToTheRunBesideThem) {
  EXPECT_EQ(metrics_run_of("out/checkpoint-500/trainer_state.json"), "out/trainer_state.json");
  EXPECT_EQ(metrics_run_of("checkpoint-500/trainer_state.json"), "trainer_state.json");
  EXPECT_EQ(metrics_run_of("out/trainer_state.json"), "out/trainer_state.json");
  EXPECT_EQ(metrics_run_of("out/checkpoint-x/trainer_state.json"),
            "out/checkpoint-x/trainer_state.json");
  EXPECT_EQ(metrics_run_of("lightning_logs/version_0/metrics.csv"),
            "lightning_logs/version_0/metrics.csv");
  const std::vector<StoredObject> listing{
      {.path = "out/checkpoint-1000/trainer_state.json", .size = 1},
      {.path = "out/checkpoint-500/trainer_state.json", .size = 1},
      {.path = "out/checkpoint-500/optimizer.pt", .size = 1},
      {.path = "out/trainer_state.json", .size = 1},
      {.path = "results.csv", .size = 1},
      {.path = "events.out.tfevents.1.host", .size = 1}};
  const std::vector<RunFiles> runs = group_metrics_runs(listing);
  ASSERT_EQ(runs.size(), 2U);
  EXPECT_EQ(runs[0].run, "out/trainer_state.json");
  ASSERT_EQ(runs[0].files.size(), 2U);  // the newest checkpoint's, then the one beside them
  EXPECT_EQ(runs[0].files[0].path, "out/checkpoint-1000/trainer_state.json");
  EXPECT_EQ(runs[0].files[1].path, "out/trainer_state.json");
  EXPECT_EQ(runs[1].run, "results.csv");
}

}  // namespace
}  // namespace rulestream
