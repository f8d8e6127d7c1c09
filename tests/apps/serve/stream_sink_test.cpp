// StreamSink and JobEventPublisher: a job's events into the Redis stream, with ids a replay
// gives again, against a redis-server of the test's own.
#include "apps/serve/stream_sink.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "apps/coordination/rule_event_codec.hpp"
#include "tests/support/redis_test_server.hpp"

namespace rulestream {
namespace {

using namespace std::chrono_literals;

RuleEvent fired(const std::string& configuration, std::int64_t step, std::string message) {
  RuleEvent event;
  event.trial = "job";
  event.rule_configuration = configuration;
  event.rule = "NonFinite";
  event.global_step = step;
  event.message = std::move(message);
  return event;
}

RuleEvent status_of(const std::string& configuration) {
  RuleEvent event = fired(configuration, 0, "");
  event.kind = RuleEvent::Kind::Status;
  event.status = RuleStatus::IssuesFound;
  return event;
}

TEST(RuleEventId, NamesJobConfigurationStepAndOccurrenceOrStatus) {
  EXPECT_EQ(rule_event_id("job", fired("NF", 12, ""), 0), "job/NF/12/0");
  EXPECT_EQ(rule_event_id("job", fired("NF", 12, ""), 1), "job/NF/12/1");
  EXPECT_EQ(rule_event_id("job", status_of("NF"), 0), "job/NF/status");
  // A configuration left unnamed goes by its rule's name, as the events say it.
  EXPECT_EQ(rule_event_id("job", fired("", 3, ""), 0), "job/NonFinite/3/0");
}

class StreamSinkTest : public testing::RedisServerTest {
 protected:
  // The entries of the stream, as (id, sink, message) in order.
  std::vector<std::tuple<std::string, std::size_t, std::string>> stream() {
    RedisConnection redis(redis_->endpoint());
    EventConsumer consumer(redis, "test");
    consumer.ensure_group();
    std::vector<std::tuple<std::string, std::size_t, std::string>> entries;
    for (const StreamEntry& entry : consumer.read(100, 10ms)) {
      entries.emplace_back(entry.event_id, entry.sink, decode_rule_event(entry.payload).message);
    }
    return entries;
  }

  JobLease acquire(RedisConnection& redis, const std::string& owner) {
    JobLeases leases(redis, {owner, 10s});
    auto lease = leases.try_acquire("job");
    EXPECT_TRUE(lease);
    return *lease;
  }
};

TEST_F(StreamSinkTest, TwoFiringsAtAStepAreTwoEventsAndAReplayRepeatsNone) {
  RedisConnection redis(redis_->endpoint());
  ServiceMetrics metrics;
  const JobLease first = acquire(redis, "a");
  auto publisher = std::make_shared<JobEventPublisher>(redis_->endpoint(), first, 1s, "rulestream");
  StreamSink sink(publisher, 0, "file out.jsonl", metrics);
  // A rule fires twice at step 5 (two series), once at 6.
  const auto steps_5_and_6 = [](StreamSink& to) {
    to.write(fired("NF", 5, "loss"));
    to.write(fired("NF", 5, "grad_norm"));
    to.write(fired("NF", 6, "loss"));
  };
  steps_5_and_6(sink);
  // The owner is paused past its lease and a second owner replays the job from its start.
  JobLeases(redis, {"a", 10s}).release(first);
  const JobLease second = acquire(redis, "b");
  auto replay = std::make_shared<JobEventPublisher>(redis_->endpoint(), second, 1s, "rulestream");
  StreamSink replayed(replay, 0, "file out.jsonl", metrics);
  steps_5_and_6(replayed);
  replayed.write(fired("NF", 7, "loss"));
  replayed.write(status_of("NF"));
  // The former owner wakes and writes what it had: fenced, nothing goes out, nothing failed.
  sink.write(fired("NF", 8, "stale"));
  using Entry = std::tuple<std::string, std::size_t, std::string>;
  EXPECT_EQ(stream(), (std::vector<Entry>{{"job/NF/5/0", 0, "loss"},
                                          {"job/NF/5/1", 0, "grad_norm"},
                                          {"job/NF/6/0", 0, "loss"},
                                          {"job/NF/7/0", 0, "loss"},
                                          {"job/NF/status", 0, ""}}));
  EXPECT_EQ(metrics.render({}).find("rulestream_sink_failures_total{"), std::string::npos);
}

TEST_F(StreamSinkTest, ASilencedPublisherPublishesNothing) {
  RedisConnection redis(redis_->endpoint());
  ServiceMetrics metrics;
  auto publisher = std::make_shared<JobEventPublisher>(redis_->endpoint(), acquire(redis, "a"), 1s,
                                                       "rulestream");
  StreamSink sink(publisher, 1, "webhook", metrics);
  sink.write(fired("NF", 1, "before"));
  publisher->silence();  // handed over: the drain's status is not the job's
  sink.write(status_of("NF"));
  using Entry = std::tuple<std::string, std::size_t, std::string>;
  EXPECT_EQ(stream(), (std::vector<Entry>{{"job/NF/1/0", 1, "before"}}));
}

TEST_F(StreamSinkTest, AnEventThatCannotReachRedisIsCountedAsTheSinksFailure) {
  RedisConnection redis(redis_->endpoint());
  ServiceMetrics metrics;
  auto publisher = std::make_shared<JobEventPublisher>(redis_->endpoint(), acquire(redis, "a"),
                                                       300ms, "rulestream");
  StreamSink sink(publisher, 0, "file out.jsonl", metrics);
  // The server stops answering for longer than a command's timeout (2 s) and the publisher's
  // 300 ms of retries together.
  std::thread freezer([&] { redis_->freeze(3s); });
  std::this_thread::sleep_for(100ms);
  sink.write(fired("NF", 1, "lost"));
  freezer.join();
  EXPECT_NE(metrics.render({}).find("rulestream_sink_failures_total{sink=\"file out.jsonl\"} 1"),
            std::string::npos)
      << metrics.render({});
}

// The job's event log gathers its events and appends them together: once kLogBatch wait, and
// the rest at flush (the end of the job's run) or the supervisor's try at each poll.
TEST_F(StreamSinkTest, TheEventLogAppendsGatheredEventsInOrderAndAFencedOwnerAppendsNone) {
  RedisConnection redis(redis_->endpoint());
  const JobLease first = acquire(redis, "a");
  auto publisher = std::make_shared<JobEventPublisher>(redis_->endpoint(), first, 1s, "rulestream");
  EventLogSink sink(publisher, 1000);
  const auto logged = [&] { return JobEventLog(redis).read("job"); };
  const std::size_t count = JobEventPublisher::kLogBatch + 3;
  for (std::size_t step = 0; step < count; ++step) {
    sink.write(fired("NF", static_cast<std::int64_t>(step), std::to_string(step)));
  }
  // Some are in before any flush: a batch filled (or the oldest waited kLogDelay first, which
  // appended those gathered by then).
  const auto before_flush = logged();
  EXPECT_GE(before_flush.payloads.size(), 1U);
  EXPECT_LE(before_flush.payloads.size(), count);
  sink.flush();
  const auto after_flush = logged();
  ASSERT_EQ(after_flush.payloads.size(), count);
  for (std::size_t step = 0; step < count; ++step) {
    EXPECT_EQ(decode_rule_event(after_flush.payloads[step]).message, std::to_string(step));
  }
  EXPECT_EQ(publisher->try_flush_log(), JobEventPublisher::Outcome::Published);  // nothing left

  // Another instance takes the job over: what the former owner gathered is never appended.
  sink.write(fired("NF", 1000, "stale"));
  JobLeases(redis, {"a", 10s}).release(first);
  acquire(redis, "b");
  EXPECT_EQ(publisher->flush_log(), JobEventPublisher::Outcome::NotTheOwner);
  EXPECT_EQ(logged().payloads.size(), count);
}

}  // namespace
}  // namespace rulestream
