#include "sinks/file_sink.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "core/model/exceptions.hpp"
#include "tests/support/rule_event_samples.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::read_text_file;
using testing::sample_rule_event;
using testing::TempDir;
using testing::write_text_file;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(FileSink, AppendsAcrossRestartsWithoutTruncating) {
  TempDir dir;
  const auto path = dir.path() / "events.jsonl";
  {
    FileSink sink(path);
    sink.write(sample_rule_event(0));
    sink.write(sample_rule_event(1));
  }
  {
    FileSink restarted(path);
    restarted.write(sample_rule_event(2));
    restarted.flush();
  }
  const auto lines = lines_of(read_text_file(path));
  ASSERT_EQ(lines.size(), 3u);
  for (int step = 0; step < 3; ++step) {
    EXPECT_EQ(lines[step], sample_rule_event(step).to_json());
    const auto parsed = boost::json::parse(lines[step]);
    EXPECT_TRUE(parsed.is_object()) << lines[step];
  }
}

TEST(FileSink, KeepsWhatTheFileAlreadyHeld) {
  TempDir dir;
  const auto path = dir.path() / "events.jsonl";
  write_text_file(path, "{\"earlier\":true}\n");
  {
    FileSink sink(path);
    sink.write(sample_rule_event(7));
  }
  EXPECT_EQ(read_text_file(path), "{\"earlier\":true}\n" + sample_rule_event(7).to_json() + "\n");
}

TEST(FileSink, EachEventIsVisibleAsSoonAsItIsWritten) {
  TempDir dir;
  const auto path = dir.path() / "events.jsonl";
  FileSink sink(path);
  sink.write(sample_rule_event(3));
  EXPECT_EQ(read_text_file(path), sample_rule_event(3).to_json() + "\n");
  EXPECT_EQ(sink.describe(), "file " + path.string());
  sink.write(sample_rule_event(4));
  EXPECT_EQ(sink.delivery(), (SinkDeliveryCounts{.delivered = 2}));
}

TEST(FileSink, DoesNotCreateMissingFoldersAndNamesThePath) {
  TempDir dir;
  const auto path = dir.path() / "missing" / "events.jsonl";
  try {
    FileSink sink(path);
    FAIL() << "expected StorageError";
  } catch (const StorageError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find("No such file or directory"), std::string::npos) << message;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "missing"));
}

TEST(FileSink, RejectsAPathThatIsAFolder) {
  TempDir dir;
  try {
    FileSink sink(dir.path());
    FAIL() << "expected StorageError";
  } catch (const StorageError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(dir.path().string()), std::string::npos) << message;
    EXPECT_NE(message.find("Is a directory"), std::string::npos) << message;
  }
}

// write() must not throw into the pipeline; the event goes to stderr rather than nowhere.
TEST(FileSink, PrintsTheEventWhenTheDiskIsFull) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "needs /dev/full";
  FileSink sink("/dev/full");
  ::testing::internal::CaptureStderr();
  sink.write(sample_rule_event(4));
  sink.flush();  // nothing to sync on a device: no complaint
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(log,
            "rulestream: file /dev/full: cannot append a rule event: No space left on device: " +
                sample_rule_event(4).to_json() + "\n");
  EXPECT_EQ(sink.delivery(), (SinkDeliveryCounts{.delivered = 0, .failures = 1}));
}

// Two sinks on one file stand for two processes appending to it: O_APPEND and one write() per
// event keep every line whole.
TEST(FileSink, TwoWritersToOneFileKeepLinesWhole) {
  TempDir dir;
  const auto path = dir.path() / "events.jsonl";
  constexpr int kPerWriter = 500;
  FileSink first(path);
  FileSink second(path);
  std::thread a([&] {
    for (int i = 0; i < kPerWriter; ++i) first.write(sample_rule_event(i, "first"));
  });
  std::thread b([&] {
    for (int i = 0; i < kPerWriter; ++i) second.write(sample_rule_event(i, "second"));
  });
  a.join();
  b.join();

  std::set<std::string> expected;
  for (int i = 0; i < kPerWriter; ++i) {
    expected.insert(sample_rule_event(i, "first").to_json());
    expected.insert(sample_rule_event(i, "second").to_json());
  }
  const auto lines = lines_of(read_text_file(path));
  ASSERT_EQ(lines.size(), expected.size());
  EXPECT_EQ(std::set<std::string>(lines.begin(), lines.end()), expected);
}

}  // namespace
}  // namespace rulestream
