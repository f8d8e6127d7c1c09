// The series store every series format reads into: TensorBoard's restart rule applied once as
// values land, counts of what was read, the values as written for inspect, and runs fed from
// several threads.
#include "stages/series/series_store.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "sources/open/storage_factory.hpp"
#include "stages/format/tensorboard_writer.hpp"
#include "stages/tensorboard/logdir_runs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::TempDir;

SummaryReading scalar(double value) {
  SummaryReading reading;
  reading.kind = TagKind::Scalar;
  reading.scalar = value;
  return reading;
}

SummaryReading histogram(double min, double max) {
  SummaryReading reading;
  reading.kind = TagKind::Histogram;
  reading.histogram.min = min;
  reading.histogram.max = max;
  reading.histogram.num = 2;
  reading.histogram.sum = min + max;
  return reading;
}

SummaryReading other() {
  return SummaryReading{};
}

SeriesTag tag_of(const std::string& run, const std::string& name, TagKind kind) {
  return {.run = run, .name = name, .kind = kind};
}

std::vector<std::int64_t> steps_of(const StoredSeries& series) {
  std::vector<std::int64_t> steps;
  for (const StoredScalar& value : series.scalars) steps.push_back(value.step);
  return steps;
}

// A run written to step 5, resumed at step 3 and stopped at step 4: TensorBoard keeps 0..4, the
// resumed values at 3 and 4, and counts the three first-pass values dropped (3, 4 and 5).
TEST(SeriesStoreTest, AppliesTheRestartRuleOnceAsValuesLand) {
  SeriesStore store;
  const SeriesTag loss = tag_of("train", "loss", TagKind::Scalar);
  RunSeries& run = store.run("train");
  for (std::int64_t step = 0; step <= 5; ++step) run.on_value(loss, step, 100.0 + step, scalar(1));
  run.on_value(loss, 3, 200.0, scalar(2));
  run.on_value(loss, 4, 201.0, scalar(2));
  const StoredSeries* series = store.find("train", "loss");
  ASSERT_NE(series, nullptr);
  EXPECT_EQ(steps_of(*series), (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(series->scalars[2].value, 1.0);
  EXPECT_EQ(series->scalars[3].value, 2.0);
  EXPECT_EQ(series->scalars[4].wall_time, 201.0);
  EXPECT_EQ(series->preempted, 3U);
  EXPECT_EQ(series->values_read, 8U);
  EXPECT_EQ(series->first_step, 0);
  EXPECT_EQ(series->last_step, 4);
}

// A value whose kind is not its tag's (a "scalars" tensor of two elements under a scalar tag)
// is counted but not kept; a tag of another kind is listed, counted, and keeps nothing.
TEST(SeriesStoreTest, KeepsOnlyValuesOfTheTagsOwnKind) {
  SeriesStore store;
  RunSeries& run = store.run(".");
  const SeriesTag loss = tag_of(".", "loss", TagKind::Scalar);
  const SeriesTag image = tag_of(".", "samples", TagKind::Image);
  const SeriesTag weights = tag_of(".", "weights", TagKind::Histogram);
  run.on_value(loss, 0, 1.0, scalar(3));
  run.on_value(loss, 1, 1.0, other());
  run.on_value(loss, 2, 1.0, scalar(1));
  run.on_value(image, 0, 1.0, other());
  run.on_value(weights, 0, 1.0, histogram(-1, 1));
  run.on_value(weights, 1, 1.0, scalar(7));
  ASSERT_EQ(run.tags().size(), 3U);
  EXPECT_EQ(run.tags()[0].tag, "loss");  // in order of first appearance
  EXPECT_EQ(run.tags()[1].tag, "samples");
  EXPECT_EQ(run.tags()[2].tag, "weights");
  EXPECT_EQ(steps_of(run.tags()[0]), (std::vector<std::int64_t>{0, 2}));
  EXPECT_EQ(run.tags()[0].values_read, 3U);
  EXPECT_EQ(run.tags()[1].kind, TagKind::Image);
  EXPECT_EQ(run.tags()[1].values_read, 1U);
  EXPECT_TRUE(run.tags()[1].scalars.empty());
  EXPECT_TRUE(run.tags()[1].histograms.empty());
  ASSERT_EQ(run.tags()[2].histograms.size(), 1U);
  EXPECT_EQ(run.tags()[2].histograms[0].figures.max, 1.0);
  EXPECT_TRUE(run.tags()[2].scalars.empty());
}

// inspect --tag lists what the files hold: every value of the tag asked for, in file order,
// duplicates, restarts and other kinds included; the other tags are only counted.
TEST(SeriesStoreTest, KeepsTheValuesAsWrittenOfTheTagsAskedFor) {
  SeriesStore store({.order = KeptOrder::AsWritten,
                     .keep_values = [](const std::string& run, const std::string& tag) {
                       return run == "train" && tag == "loss";
                     }});
  const SeriesTag train_loss = tag_of("train", "loss", TagKind::Scalar);
  const SeriesTag train_acc = tag_of("train", "acc", TagKind::Scalar);
  const SeriesTag val_loss = tag_of("val", "loss", TagKind::Scalar);
  for (const std::int64_t step : {0, 1, 2, 1, 2}) {
    store.sink().on_value(train_loss, step, 0.0, scalar(static_cast<double>(step)));
    store.sink().on_value(train_acc, step, 0.0, scalar(0.5));
    store.sink().on_value(val_loss, step, 0.0, scalar(0.5));
  }
  store.sink().on_value(train_loss, 3, 0.0, other());
  const StoredSeries* loss = store.find("train", "loss");
  ASSERT_NE(loss, nullptr);
  std::vector<std::int64_t> steps;
  for (const StoredReading& value : loss->as_written) steps.push_back(value.step);
  EXPECT_EQ(steps, (std::vector<std::int64_t>{0, 1, 2, 1, 2, 3}));
  EXPECT_EQ(loss->as_written.back().reading.kind, TagKind::Other);
  EXPECT_TRUE(loss->scalars.empty());
  EXPECT_EQ(loss->preempted, 0U);
  EXPECT_TRUE(store.find("train", "acc")->as_written.empty());
  EXPECT_EQ(store.find("train", "acc")->values_read, 5U);
  EXPECT_TRUE(store.find("val", "loss")->as_written.empty());
  EXPECT_EQ(store.run_names(), (std::vector<std::string>{"train", "val"}));
}

// The span takes wall times that are dates only: not NaN (a CSV without a time column), not
// seconds since the start (an elapsed-time column), not a corrupt record's time.
TEST(SeriesStoreTest, ItsTimeSpanTakesOnlyDates) {
  SeriesStore store;
  const SeriesTag a = tag_of("a", "loss", TagKind::Scalar);
  const SeriesTag b = tag_of("b", "loss", TagKind::Scalar);
  store.run("a").on_value(a, 0, std::numeric_limits<double>::quiet_NaN(), scalar(1));
  store.run("a").on_value(a, 1, 12.5, scalar(1));
  EXPECT_FALSE(store.dated_span().has_value());
  store.run("a").on_value(a, 2, 1.7e9 + 10, scalar(1));
  store.run("b").on_value(b, 0, 1.7e9, scalar(1));
  store.run("b").on_value(b, 1, 1e300, scalar(1));
  const auto span = store.dated_span();
  ASSERT_TRUE(span.has_value());
  EXPECT_EQ(span->first, 1.7e9);
  EXPECT_EQ(span->second, 1.7e9 + 10);
}

// A replay reads runs on several threads, each feeding its own run: nothing is lost or mixed,
// and the runs come back in run-name order.
TEST(SeriesStoreTest, RunsFedFromSeveralThreadsKeepTheirOwnValues) {
  SeriesStore store;
  constexpr int kRuns = 8;
  constexpr std::int64_t kSteps = 2000;
  std::vector<std::thread> threads;
  for (int index = 0; index < kRuns; ++index) {
    threads.emplace_back([&store, index] {
      const std::string name = "run" + std::to_string(kRuns - 1 - index);
      const SeriesTag loss = tag_of(name, "loss", TagKind::Scalar);
      RunSeries& run = store.run(name);
      for (std::int64_t step = 0; step < kSteps; ++step) {
        run.on_value(loss, step, 0.0, scalar(static_cast<double>(index)));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const std::vector<const RunSeries*> runs = store.runs();
  ASSERT_EQ(runs.size(), static_cast<std::size_t>(kRuns));
  for (int position = 0; position < kRuns; ++position) {
    EXPECT_EQ(runs[position]->run(), "run" + std::to_string(position));
    const StoredSeries& loss = runs[position]->tags().at(0);
    ASSERT_EQ(loss.scalars.size(), static_cast<std::size_t>(kSteps));
    const double writer = kRuns - 1 - position;
    for (const StoredScalar& value : loss.scalars) ASSERT_EQ(value.value, writer);
  }
}

// read_into_store lists every run, those with no values too (a run whose file holds only its
// file_version record), and keeps the values the files hold.
TEST(SeriesStoreTest, ReadIntoStoreListsRunsWithoutValues) {
  TempDir dir;
  {
    TensorBoardWriter train(dir.path() / "train" / "events.out.tfevents.1.host");
    for (std::int64_t step = 0; step < 4; ++step) {
      train.add_scalar("epoch_loss", step, 1.0F / static_cast<float>(step + 1), 1.7e9 + step);
    }
    TensorBoardWriter empty(dir.path() / "empty" / "events.out.tfevents.2.host");
  }
  SeriesStore store;
  const SeriesJobRead read = read_into_store(*open_storage(dir.path().string(), StorageOptions{}),
                                             store, {}, tensorboard_series_format());
  EXPECT_EQ(read.runs, (std::vector<std::string>{"empty", "train"}));
  EXPECT_EQ(store.run_names(), read.runs);
  EXPECT_TRUE(store.runs()[0]->tags().empty());
  ASSERT_NE(store.find_run("empty"), nullptr);
  EXPECT_TRUE(store.find_run("empty")->tags().empty());
  EXPECT_EQ(store.find_run("validation"), nullptr);
  const StoredSeries* loss = store.find("train", "epoch_loss");
  ASSERT_NE(loss, nullptr);
  ASSERT_EQ(loss->scalars.size(), 4U);
  EXPECT_EQ(loss->scalars[3].value, static_cast<double>(0.25F));
  EXPECT_EQ(loss->scalars[3].wall_time, 1.7e9 + 3);
}

}  // namespace
}  // namespace rulestream
