// A job's event log in Redis against a real redis-server: appended under the owner's fence,
// once per id across takeovers, the newest kept, and read with the count of those forgotten.
#include "apps/coordination/job_event_log.hpp"

#include <gtest/gtest.h>

#include "tests/support/redis_test_server.hpp"

namespace rulestream {
namespace {

using namespace std::chrono_literals;
using Outcome = JobEventLog::Outcome;

class JobEventLogTest : public testing::RedisServerTest {};

// An instance's connection, its leases as `owner`, and the log through that connection.
struct Instance {
  Instance(const RedisEndpoint& endpoint, const std::string& owner)
      : redis(endpoint), leases(redis, {owner, 300ms}), log(redis) {}
  RedisConnection redis;
  JobLeases leases;
  JobEventLog log;
};

TEST_F(JobEventLogTest, AnIdIsAppendedOnceWhoeverOwnsTheJobAndAFormerOwnerAppendsNothing) {
  Instance a(redis_->endpoint(), "a");
  JobLeases& first_leases = a.leases;
  JobEventLog& first_log = a.log;
  const auto first = first_leases.try_acquire("job1");
  ASSERT_TRUE(first);
  EXPECT_EQ(first_log.append(*first, "job1/VG/3/0", "three", 10), Outcome::Appended);
  EXPECT_EQ(first_log.append(*first, "job1/VG/4/0", "four", 10), Outcome::Appended);
  EXPECT_EQ(first_log.append(*first, "job1/VG/3/0", "three", 10), Outcome::AlreadyAppended);

  // A takeover replays the job from its start: only what is new is appended.
  first_leases.release(*first);
  Instance b(redis_->endpoint(), "b");
  JobEventLog& second_log = b.log;
  const auto second = b.leases.try_acquire("job1");
  ASSERT_TRUE(second);
  EXPECT_EQ(second_log.append(*second, "job1/VG/3/0", "three", 10), Outcome::AlreadyAppended);
  EXPECT_EQ(second_log.append(*second, "job1/VG/4/0", "four", 10), Outcome::AlreadyAppended);
  EXPECT_EQ(second_log.append(*second, "job1/VG/5/0", "five", 10), Outcome::Appended);
  EXPECT_EQ(first_log.append(*first, "job1/VG/6/0", "six", 10), Outcome::Fenced);

  // Any connection reads the same: oldest first, nothing forgotten.
  RedisConnection reader(redis_->endpoint());
  const auto events = JobEventLog(reader).read("job1");
  EXPECT_EQ(events.payloads, (std::vector<std::string>{"three", "four", "five"}));
  EXPECT_EQ(events.total, 3);
}

TEST_F(JobEventLogTest, TheNewestAreKeptAndTheForgottenCounted) {
  Instance a(redis_->endpoint(), "a");
  JobEventLog& log = a.log;
  const auto lease = a.leases.try_acquire("job2");
  ASSERT_TRUE(lease);
  for (int step = 0; step < 7; ++step) {
    ASSERT_EQ(log.append(*lease, "job2/VG/" + std::to_string(step) + "/0", std::to_string(step), 3),
              Outcome::Appended);
  }
  const auto events = log.read("job2");
  EXPECT_EQ(events.payloads, (std::vector<std::string>{"4", "5", "6"}));
  EXPECT_EQ(events.total, 7);  // four forgotten
  // A job nobody logged anything of: nothing, and nothing forgotten.
  const auto none = log.read("job3");
  EXPECT_TRUE(none.payloads.empty());
  EXPECT_EQ(none.total, 0);
}

TEST_F(JobEventLogTest, ManyEventsAreAppendedInOneGoInOrderEachIdOnce) {
  Instance a(redis_->endpoint(), "a");
  JobEventLog& log = a.log;
  const auto lease = a.leases.try_acquire("job4");
  ASSERT_TRUE(lease);
  ASSERT_EQ(log.append(*lease, "job4/VG/1/0", "one", 4), Outcome::Appended);
  // Step 1 again (a replay), and step 3 twice in the same batch: neither is appended twice.
  const std::vector<JobEventLog::Entry> batch{{"job4/VG/1/0", "one"},   {"job4/VG/2/0", "two"},
                                              {"job4/VG/3/0", "three"}, {"job4/VG/3/0", "three"},
                                              {"job4/VG/4/0", "four"},  {"job4/VG/5/0", "five"}};
  EXPECT_EQ(log.append_all(*lease, batch, 4), std::optional<std::size_t>(4));
  const auto events = log.read("job4");
  EXPECT_EQ(events.payloads, (std::vector<std::string>{"two", "three", "four", "five"}));
  EXPECT_EQ(events.total, 5);  // "one" forgotten: the list keeps four
  EXPECT_EQ(log.append_all(*lease, {}, 4), std::optional<std::size_t>(0));

  // Fenced: the batch is refused whole.
  a.leases.release(*lease);
  Instance b(redis_->endpoint(), "b");
  ASSERT_TRUE(b.leases.try_acquire("job4"));
  EXPECT_EQ(log.append_all(*lease, {{"job4/VG/6/0", "six"}}, 4), std::nullopt);
  EXPECT_EQ(log.read("job4").total, 5);
}

}  // namespace
}  // namespace rulestream
