// A job's event log in Redis against a real redis-server: appended under the owner's fence,
// once per id across takeovers, the newest kept, and read with the count of those forgotten.
#include "pipeline/coordination/job_event_log.hpp"

#include <gtest/gtest.h>

#include "tests/support/redis_test_server.hpp"

namespace rulestream {
namespace {

using namespace std::chrono_literals;
using Outcome = JobEventLog::Outcome;

class JobEventLogTest : public testing::RedisServerTest {};

TEST_F(JobEventLogTest, AnIdIsAppendedOnceWhoeverOwnsTheJobAndAFormerOwnerAppendsNothing) {
  RedisConnection first_redis(redis_->endpoint());
  JobLeases first_leases(first_redis, {"a", 300ms});
  JobEventLog first_log(first_redis);
  const auto first = first_leases.try_acquire("job1");
  ASSERT_TRUE(first);
  EXPECT_EQ(first_log.append(*first, "job1/VG/3/0", "three", 10), Outcome::Appended);
  EXPECT_EQ(first_log.append(*first, "job1/VG/4/0", "four", 10), Outcome::Appended);
  EXPECT_EQ(first_log.append(*first, "job1/VG/3/0", "three", 10), Outcome::AlreadyAppended);

  // A takeover replays the job from its start: only what is new is appended.
  first_leases.release(*first);
  RedisConnection second_redis(redis_->endpoint());
  JobLeases second_leases(second_redis, {"b", 300ms});
  JobEventLog second_log(second_redis);
  const auto second = second_leases.try_acquire("job1");
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
  RedisConnection redis(redis_->endpoint());
  JobLeases leases(redis, {"a", 300ms});
  JobEventLog log(redis);
  const auto lease = leases.try_acquire("job2");
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

}  // namespace
}  // namespace rulestream
