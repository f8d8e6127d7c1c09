// Job leases and their fencing tokens against a real redis-server: two instances ("a", "b")
// each with a connection of its own, as two serve processes have.
#include "apps/coordination/job_leases.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "tests/support/redis_test_server.hpp"

namespace rulestream {
namespace {

using namespace std::chrono_literals;

class JobLeasesTest : public testing::RedisServerTest {
 protected:
  void SetUp() override {
    RedisServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    a_redis_ = std::make_unique<RedisConnection>(redis_->endpoint());
    b_redis_ = std::make_unique<RedisConnection>(redis_->endpoint());
    a_ = std::make_unique<JobLeases>(*a_redis_, JobLeaseOptions{"a", ttl_});
    b_ = std::make_unique<JobLeases>(*b_redis_, JobLeaseOptions{"b", ttl_});
  }

  const std::chrono::milliseconds ttl_ = 300ms;
  std::unique_ptr<RedisConnection> a_redis_, b_redis_;
  std::unique_ptr<JobLeases> a_, b_;
};

TEST_F(JobLeasesTest, OneOwnerAtATime) {
  const auto lease = a_->try_acquire("job1");
  ASSERT_TRUE(lease);
  EXPECT_EQ(lease->job, "job1");
  EXPECT_EQ(lease->token, 1);  // the first acquisition of the job's counter
  EXPECT_EQ(lease->value, "a#1");
  EXPECT_FALSE(b_->try_acquire("job1"));
  EXPECT_FALSE(a_->try_acquire("job1"));  // not twice, not even by its holder
  // Another job is another lease, with a counter of its own.
  const auto other = b_->try_acquire("job2");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->token, 1);
}

TEST_F(JobLeasesTest, TheLeaseKeyHoldsOwnerAndTokenAndExpiresWithinTheTtl) {
  const auto lease = a_->try_acquire("job1");
  ASSERT_TRUE(lease);
  EXPECT_EQ(a_redis_->command({"GET", "rulestream:job:job1:lease"}).as_string(), "a#1");
  EXPECT_EQ(a_redis_->command({"GET", "rulestream:job:job1:fence"}).as_string(), "1");
  const std::int64_t pttl = a_redis_->command({"PTTL", "rulestream:job:job1:lease"}).as_integer();
  EXPECT_GT(pttl, 0);
  EXPECT_LE(pttl, ttl_.count());
}

TEST_F(JobLeasesTest, RenewingKeepsTheLeasePastItsTtl) {
  const auto lease = a_->try_acquire("job1");
  ASSERT_TRUE(lease);
  for (int i = 0; i < 6; ++i) {  // 6 x 100 ms: twice the TTL
    std::this_thread::sleep_for(100ms);
    EXPECT_TRUE(a_->renew(*lease));
  }
  EXPECT_FALSE(b_->try_acquire("job1"));
}

TEST_F(JobLeasesTest, ALapsedLeaseIsTakenOverWithANewerTokenAndFencesTheFormerOwner) {
  const auto first = a_->try_acquire("job1");
  ASSERT_TRUE(first);
  std::this_thread::sleep_for(ttl_ + 100ms);  // "a" pauses past its TTL
  const auto second = b_->try_acquire("job1");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->token, 2);
  EXPECT_EQ(second->value, "b#2");
  // "a" wakes: its lease is gone, and it may not end the job "b" now runs.
  EXPECT_FALSE(a_->renew(*first));
  EXPECT_FALSE(a_->end(*first, "Finished"));
  EXPECT_FALSE(a_->ended("job1"));
  a_->release(*first);  // releases nothing of b's
  EXPECT_EQ(a_redis_->command({"GET", "rulestream:job:job1:lease"}).as_string(), "b#2");
  EXPECT_TRUE(b_->renew(*second));
}

TEST_F(JobLeasesTest, ALapsedLeaseNobodyTookStillEndsTheJob) {
  const auto lease = a_->try_acquire("job1");
  ASSERT_TRUE(lease);
  std::this_thread::sleep_for(ttl_ + 100ms);
  EXPECT_FALSE(a_->renew(*lease));  // lapsed
  // Its token is still the latest: what it did is the latest work on the job.
  EXPECT_TRUE(a_->end(*lease, "Finished"));
  EXPECT_EQ(b_->ended("job1"), "Finished");
}

TEST_F(JobLeasesTest, AnEndedJobIsNeverTakenAgain) {
  const auto lease = a_->try_acquire("job1");
  ASSERT_TRUE(lease);
  EXPECT_TRUE(a_->end(*lease, "Error"));
  EXPECT_EQ(b_->ended("job1"), "Error");
  EXPECT_EQ(a_redis_->command({"EXISTS", "rulestream:job:job1:lease"}).as_integer(), 0);
  EXPECT_FALSE(b_->try_acquire("job1"));
  std::this_thread::sleep_for(ttl_ + 100ms);
  EXPECT_FALSE(b_->try_acquire("job1"));
}

TEST_F(JobLeasesTest, AReleasedLeaseIsTakenAtOnce) {
  const auto lease = a_->try_acquire("job1");
  ASSERT_TRUE(lease);
  a_->release(*lease);
  const auto taken = b_->try_acquire("job1");
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->token, 2);
  EXPECT_FALSE(b_->ended("job1"));  // handed over, not ended
}

TEST_F(JobLeasesTest, ConcurrentAcquisitionsGrantEachJobOnce) {
  // Eight instances race for 50 jobs: every job goes to exactly one, with token 1.
  constexpr int kInstances = 8;
  constexpr int kJobs = 50;
  std::vector<std::vector<JobLease>> won(kInstances);
  std::vector<std::thread> racers;
  for (int i = 0; i < kInstances; ++i) {
    racers.emplace_back([&, i] {
      RedisConnection redis(redis_->endpoint());
      JobLeases leases(redis, {"instance" + std::to_string(i), 10s});
      for (int job = 0; job < kJobs; ++job) {
        if (auto lease = leases.try_acquire("job" + std::to_string(job))) {
          won[i].push_back(*lease);
        }
      }
    });
  }
  for (auto& racer : racers) racer.join();
  std::map<std::string, int> owners;
  for (const auto& leases : won) {
    for (const JobLease& lease : leases) {
      ++owners[lease.job];
      EXPECT_EQ(lease.token, 1) << lease.job;
    }
  }
  EXPECT_EQ(owners.size(), static_cast<std::size_t>(kJobs));
  for (const auto& [job, count] : owners) EXPECT_EQ(count, 1) << job;
}

TEST_F(JobLeasesTest, AnOwnerNameMustBeUsableInTheLeaseValue) {
  EXPECT_THROW(JobLeases(*a_redis_, {"a#b", 1s}), std::invalid_argument);
  EXPECT_THROW(JobLeases(*a_redis_, {"", 1s}), std::invalid_argument);
  EXPECT_THROW(JobLeases(*a_redis_, {"a", 0ms}), std::invalid_argument);
}

}  // namespace
}  // namespace rulestream
