// read_run_file within a job's memory budget: a window grown for a record larger than the first
// window takes its bytes from the budget, so runs read at the same time never hold more than it
// together, and a record the budget cannot hold ends its file with a problem.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "core/model/memory_budget.hpp"
#include "sources/open/storage_factory.hpp"
#include "stages/format/proto/event.pb.h"
#include "stages/format/tfrecord_writer.hpp"
#include "stages/series/series_reader.hpp"
#include "stages/tensorboard/logdir_runs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::TempDir;

constexpr std::uint64_t kWindow = 64 << 10;
constexpr std::uint64_t kLimit = 3 << 20;

// Scalars at steps 0..`count`-1, each record padded to about `record_bytes` by its metadata's
// description (which readers skip): a record larger than the first window.
std::string event_file(int count, std::size_t record_bytes) {
  std::string out;
  for (int step = 0; step < count; ++step) {
    tfproto::Event event;
    event.set_step(step);
    auto* value = event.mutable_summary()->add_value();
    value->set_tag("loss");
    value->set_simple_value(static_cast<float>(step));
    value->mutable_metadata()->set_summary_description(std::string(record_bytes, 'x'));
    append_record(out, event.SerializeAsString(), FooterStyle::PayloadCrc);
  }
  return out;
}

struct Counted final : SeriesValueSink {
  void on_value(const SeriesTag&, std::int64_t, double, const SummaryReading& reading) override {
    if (reading.kind == TagKind::Scalar) ++scalars;
  }
  int scalars = 0;
};

struct FileRead {
  int scalars = 0;
  std::vector<SeriesProblem> problems;
};

FileRead read_file(const Storage& storage, const std::string& path, MemoryBudget& budget) {
  const auto listing = storage.list("");
  StoredObject file;
  for (const StoredObject& each : listing) {
    if (each.path == path) file = each;
  }
  const auto loader =
      tensorboard_series_format().make_loader(tensorboard_series_format().run_of(path));
  Counted sink;
  FileRead read;
  read_run_file(storage, file, *loader, sink, true,
                {.window_bytes = kWindow, .max_record_bytes = kLimit, .budget = &budget},
                read.problems);
  read.problems.insert(read.problems.end(), loader->problems().begin(), loader->problems().end());
  read.scalars = sink.scalars;
  return read;
}

// Records of 1.5 MiB need a window of 2 MiB: 1.94 MiB beyond the first. Two such windows
// (3.9 MiB) do not fit a 3 MiB budget together: one reader waits for the other, and both read
// every value.
TEST(SeriesReaderBudgetTest, RunsReadAtOnceShareTheBudgetAndReadEverything) {
  TempDir dir;
  for (const std::string run : {"a", "b"}) {
    testing::write_text_file(dir.path() / run / "events.out.tfevents.1.host",
                             event_file(6, std::size_t{3} << 19));
  }
  const auto storage = open_storage(dir.path().string(), StorageOptions{});
  MemoryBudget budget(kLimit);
  std::vector<FileRead> reads(2);
  std::vector<std::thread> readers;
  for (int i = 0; i < 2; ++i) {
    readers.emplace_back([&, i] {
      reads[i] = read_file(*storage,
                           std::string(i == 0 ? "a" : "b") + "/events.out.tfevents.1.host", budget);
    });
  }
  for (auto& reader : readers) reader.join();
  for (const FileRead& read : reads) {
    EXPECT_EQ(read.scalars, 6);
    EXPECT_TRUE(read.problems.empty()) << read.problems.front().message;
  }
  EXPECT_GT(budget.peak_reserved(), std::size_t{1} << 20);  // the windows took their bytes
  EXPECT_LE(budget.peak_reserved(), kLimit);
  EXPECT_EQ(budget.reserved(), 0U);  // and gave them back
}

// A record the budget cannot hold even alone (more than 3 MiB beyond the first window) ends its
// file with a problem naming the budget; what came before it is read.
TEST(SeriesReaderBudgetTest, ARecordLargerThanTheBudgetEndsItsFileWithAProblem) {
  TempDir dir;
  std::string file = event_file(2, 1000);
  file += event_file(1, std::size_t{4} << 20);
  testing::write_text_file(dir.path() / "events.out.tfevents.1.host", file);
  const auto storage = open_storage(dir.path().string(), StorageOptions{});
  MemoryBudget budget(kLimit);
  const FileRead read = read_file(*storage, "events.out.tfevents.1.host", budget);
  EXPECT_EQ(read.scalars, 2);
  ASSERT_EQ(read.problems.size(), 1U);
  EXPECT_NE(read.problems[0].message.find("--max-memory"), std::string::npos)
      << read.problems[0].message;
  EXPECT_EQ(budget.reserved(), 0U);
}

}  // namespace
}  // namespace rulestream
