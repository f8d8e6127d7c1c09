#include "sinks/stdout_sink.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "tests/support/rule_event_samples.hpp"

namespace rulestream {
namespace {

using testing::sample_rule_event;
using testing::sample_status_event;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(StdoutSink, WritesOneTextLinePerEventByDefault) {
  std::ostringstream out;
  StdoutSink sink(out);
  const RuleEvent first = sample_rule_event(10);
  const RuleEvent status = sample_status_event(RuleStatus::IssuesFound);
  sink.write(first);
  sink.write(status);
  EXPECT_EQ(out.str(), first.to_text() + "\n" + status.to_text() + "\n");
  EXPECT_EQ(sink.describe(), "stdout");
}

TEST(StdoutSink, WritesOneJsonObjectPerLineWithJsonFormat) {
  std::ostringstream out;
  StdoutSink sink(out, StdoutSink::Format::Json);
  for (int step = 0; step < 3; ++step) sink.write(sample_rule_event(step));
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 3u);
  for (int step = 0; step < 3; ++step) {
    EXPECT_EQ(lines[step], sample_rule_event(step).to_json());
    EXPECT_TRUE(boost::json::parse(lines[step]).is_object()) << lines[step];
  }
}

// Counts flushes, which reach the buffer as sync().
class SyncCountingBuffer : public std::stringbuf {
 public:
  int syncs = 0;

 protected:
  int sync() override {
    ++syncs;
    return std::stringbuf::sync();
  }
};

// Flushed per line: a person tailing the output (or a pipe into jq) sees each event as it comes.
TEST(StdoutSink, FlushesEveryLine) {
  SyncCountingBuffer buffer;
  std::ostream out(&buffer);
  StdoutSink sink(out);
  sink.write(sample_rule_event(1));
  EXPECT_EQ(buffer.syncs, 1);
  sink.write(sample_rule_event(2));
  EXPECT_EQ(buffer.syncs, 2);
  EXPECT_EQ(buffer.str(),
            sample_rule_event(1).to_text() + "\n" + sample_rule_event(2).to_text() + "\n");
}

// A broken output does not stop the pipeline, and the events are not lost from sight.
TEST(StdoutSink, ReportsLinesItCannotWriteAndKeepsGoing) {
  std::ostream broken(nullptr);
  StdoutSink sink(broken);
  ::testing::internal::CaptureStderr();
  sink.write(sample_rule_event(1));
  sink.write(sample_rule_event(2));
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(log,
            "rulestream: stdout: cannot write a rule event: " + sample_rule_event(1).to_text() +
                "\nrulestream: stdout: cannot write a rule event: " +
                sample_rule_event(2).to_text() + "\n");
}

TEST(StdoutSink, KeepsLinesWholeUnderConcurrentWrites) {
  std::ostringstream out;
  StdoutSink sink(out, StdoutSink::Format::Json);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 200;
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&sink, t] {
      for (int i = 0; i < kPerThread; ++i) sink.write(sample_rule_event(t * kPerThread + i));
    });
  }
  for (auto& writer : writers) writer.join();
  sink.flush();

  std::set<std::string> expected;
  for (int step = 0; step < kThreads * kPerThread; ++step) {
    expected.insert(sample_rule_event(step).to_json());
  }
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), expected.size());
  EXPECT_EQ(std::set<std::string>(lines.begin(), lines.end()), expected);
}

}  // namespace
}  // namespace rulestream
