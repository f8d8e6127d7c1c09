// Rule events through the Redis stream against a real redis-server: fenced, deduplicated
// publishing, and delivery through the consumer group at least once.
#include "apps/coordination/event_stream.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "tests/support/redis_test_server.hpp"

namespace rulestream {
namespace {

using namespace std::chrono_literals;

class EventStreamTest : public testing::RedisServerTest {
 protected:
  void SetUp() override {
    RedisServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    owner_redis_ = std::make_unique<RedisConnection>(redis_->endpoint());
    leases_ = std::make_unique<JobLeases>(*owner_redis_, JobLeaseOptions{"a", 300ms});
    publisher_ = std::make_unique<EventPublisher>(*owner_redis_);
  }

  std::vector<std::string> event_ids(const std::vector<StreamEntry>& entries) {
    std::vector<std::string> ids;
    for (const auto& entry : entries) ids.push_back(entry.event_id);
    return ids;
  }

  std::unique_ptr<RedisConnection> owner_redis_;
  std::unique_ptr<JobLeases> leases_;
  std::unique_ptr<EventPublisher> publisher_;
};

TEST_F(EventStreamTest, AnIdIsPublishedOnceWhoeverPublishesIt) {
  RedisConnection redis(redis_->endpoint(), {2s, 5s});
  EventConsumer consumer(redis, "reader");
  consumer.ensure_group();
  const auto first = leases_->try_acquire("job1");
  ASSERT_TRUE(first);
  using Outcome = EventPublisher::Outcome;
  EXPECT_EQ(publisher_->publish(*first, "job1/VG/3/0", 0, "three"), Outcome::Published);
  EXPECT_EQ(publisher_->publish(*first, "job1/VG/4/0", 0, "four"), Outcome::Published);
  EXPECT_EQ(publisher_->publish(*first, "job1/VG/3/0", 0, "three"), Outcome::AlreadyPublished);
  // A takeover replays the job: what was published is not again; what is new is.
  leases_->release(*first);
  RedisConnection other_redis(redis_->endpoint());
  JobLeases other_leases(other_redis, {"b", 300ms});
  EventPublisher other(other_redis);
  const auto second = other_leases.try_acquire("job1");
  ASSERT_TRUE(second);
  EXPECT_EQ(other.publish(*second, "job1/VG/3/0", 0, "three"), Outcome::AlreadyPublished);
  EXPECT_EQ(other.publish(*second, "job1/VG/4/0", 0, "four"), Outcome::AlreadyPublished);
  EXPECT_EQ(other.publish(*second, "job1/VG/5/0", 0, "five"), Outcome::Published);
  // The former owner, fenced, publishes nothing, even what is new.
  EXPECT_EQ(publisher_->publish(*first, "job1/VG/6/0", 0, "six"), Outcome::Fenced);

  const auto entries = consumer.read(10, 100ms);
  EXPECT_EQ(event_ids(entries),
            (std::vector<std::string>{"job1/VG/3/0", "job1/VG/4/0", "job1/VG/5/0"}));
  EXPECT_EQ(entries[1].payload, "four");
}

TEST_F(EventStreamTest, AnEventForTwoSinksIsTwoEntries) {
  RedisConnection redis(redis_->endpoint(), {2s, 5s});
  EventConsumer consumer(redis, "reader");
  consumer.ensure_group();
  const auto lease = leases_->try_acquire("job1");
  ASSERT_TRUE(lease);
  using Outcome = EventPublisher::Outcome;
  EXPECT_EQ(publisher_->publish(*lease, "job1/VG/3/0", 0, "x"), Outcome::Published);
  EXPECT_EQ(publisher_->publish(*lease, "job1/VG/3/0", 2, "x"), Outcome::Published);
  EXPECT_EQ(publisher_->publish(*lease, "job1/VG/3/0", 2, "x"), Outcome::AlreadyPublished);
  const auto entries = consumer.read(10, 100ms);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].sink, 0u);
  EXPECT_EQ(entries[1].sink, 2u);
  EXPECT_EQ(entries[0].job_place, "");  // the service's sinks
}

// A sink of the job's own rules file: the entry says where the job is, so that any instance
// can find the sink; it is still published once per id and sink.
TEST_F(EventStreamTest, AnEntryForAJobsOwnSinkSaysWhereTheJobIs) {
  RedisConnection redis(redis_->endpoint(), {2s, 5s});
  EventConsumer consumer(redis, "reader");
  consumer.ensure_group();
  const auto lease = leases_->try_acquire("job1");
  ASSERT_TRUE(lease);
  using Outcome = EventPublisher::Outcome;
  EXPECT_EQ(publisher_->publish(*lease, "job1/VG/3/0", 1, "x", "/jobs/job1"), Outcome::Published);
  EXPECT_EQ(publisher_->publish(*lease, "job1/VG/3/0", 1, "x", "/jobs/job1"),
            Outcome::AlreadyPublished);
  EXPECT_EQ(publisher_->publish(*lease, "job1/VG/4/0", 0, "y"), Outcome::Published);
  const auto entries = consumer.read(10, 100ms);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].sink, 1u);
  EXPECT_EQ(entries[0].job_place, "/jobs/job1");
  EXPECT_EQ(entries[0].payload, "x");
  EXPECT_EQ(entries[1].job_place, "");
}

TEST_F(EventStreamTest, AcknowledgedEntriesLeaveTheStream) {
  RedisConnection redis(redis_->endpoint(), {2s, 5s});
  EventConsumer consumer(redis, "reader");
  consumer.ensure_group();
  consumer.ensure_group();  // a second instance's start: the group is there already
  const auto lease = leases_->try_acquire("job1");
  ASSERT_TRUE(lease);
  publisher_->publish(*lease, "e1", 0, "1");
  publisher_->publish(*lease, "e2", 0, "2");
  const auto entries = consumer.read(10, 100ms);
  ASSERT_EQ(entries.size(), 2u);
  consumer.acknowledge({entries[0].entry_id, entries[1].entry_id});
  EXPECT_EQ(redis.command({"XLEN", "rulestream:events"}).as_integer(), 0);
  EXPECT_TRUE(consumer.read(10, 50ms).empty());
  EXPECT_TRUE(consumer.claim_stale(0ms, 10).empty());  // nothing pending either
}

TEST_F(EventStreamTest, EachEntryGoesToOneConsumerAndADeadOnesAreClaimed) {
  RedisConnection redis_a(redis_->endpoint(), {2s, 5s});
  RedisConnection redis_b(redis_->endpoint(), {2s, 5s});
  EventConsumer a(redis_a, "a");
  EventConsumer b(redis_b, "b");
  a.ensure_group();
  const auto lease = leases_->try_acquire("job1");
  ASSERT_TRUE(lease);
  for (int i = 0; i < 4; ++i) publisher_->publish(*lease, "e" + std::to_string(i), 0, "x");
  const auto read_by_a = a.read(3, 100ms);  // "a" reads three, then dies before acknowledging
  const auto read_by_b = b.read(10, 100ms);
  EXPECT_EQ(event_ids(read_by_a), (std::vector<std::string>{"e0", "e1", "e2"}));
  EXPECT_EQ(event_ids(read_by_b), (std::vector<std::string>{"e3"}));
  b.acknowledge({read_by_b[0].entry_id});
  // Not idle long enough yet: "a" may still be working on them.
  EXPECT_TRUE(b.claim_stale(10s, 10).empty());
  std::this_thread::sleep_for(200ms);
  const auto claimed = b.claim_stale(100ms, 10);
  EXPECT_EQ(event_ids(claimed), (std::vector<std::string>{"e0", "e1", "e2"}));
  std::vector<std::string> ids;
  for (const auto& entry : claimed) ids.push_back(entry.entry_id);
  b.acknowledge(ids);
  EXPECT_EQ(redis_b.command({"XLEN", "rulestream:events"}).as_integer(), 0);
}

TEST_F(EventStreamTest, AReadWaitsForANewEntry) {
  RedisConnection redis(redis_->endpoint(), {2s, 5s});
  EventConsumer consumer(redis, "reader");
  consumer.ensure_group();
  const auto lease = leases_->try_acquire("job1");
  ASSERT_TRUE(lease);
  std::thread later([&] {
    std::this_thread::sleep_for(100ms);
    RedisConnection publisher_redis(redis_->endpoint());
    EventPublisher(publisher_redis).publish(*lease, "late", 0, "x");
  });
  const auto entries = consumer.read(10, 3s);
  later.join();
  EXPECT_EQ(event_ids(entries), std::vector<std::string>{"late"});
}

}  // namespace
}  // namespace rulestream
