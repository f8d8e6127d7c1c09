// LeaseHeartbeat against a real redis-server: leases kept past their TTL, and lost ones said.
#include "apps/coordination/lease_heartbeat.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "tests/support/redis_test_server.hpp"

namespace rulestream {
namespace {

using namespace std::chrono_literals;

class LeaseHeartbeatTest : public testing::RedisServerTest {
 protected:
  void SetUp() override {
    RedisServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    redis_a_ = std::make_unique<RedisConnection>(redis_->endpoint());
    redis_b_ = std::make_unique<RedisConnection>(redis_->endpoint());
    a_ = std::make_unique<JobLeases>(*redis_a_, JobLeaseOptions{"a", ttl_});
    b_ = std::make_unique<JobLeases>(*redis_b_, JobLeaseOptions{"b", ttl_});
  }

  // The jobs whose leases the heartbeat said were lost, in order.
  std::vector<std::string> lost() {
    std::lock_guard lock(mutex_);
    return lost_;
  }
  // Until the heartbeat says a lease is lost, for at most 5 s.
  void wait_for_a_loss() {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (lost().empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(20ms);
    }
  }
  std::function<void(const JobLease&)> record_lost() {
    return [this](const JobLease& lease) {
      std::lock_guard lock(mutex_);
      lost_.push_back(lease.job);
    };
  }

  const std::chrono::milliseconds ttl_ = 300ms;
  std::unique_ptr<RedisConnection> redis_a_, redis_b_;
  std::unique_ptr<JobLeases> a_, b_;
  std::mutex mutex_;
  std::vector<std::string> lost_;
};

TEST_F(LeaseHeartbeatTest, KeepsHeldLeasesPastTheirTtl) {
  LeaseHeartbeat heartbeat(redis_->endpoint(), {"a", ttl_}, record_lost());
  const auto lease = a_->try_acquire("job1");
  ASSERT_TRUE(lease);
  heartbeat.hold(*lease);
  EXPECT_EQ(heartbeat.held(), 1u);
  std::this_thread::sleep_for(4 * ttl_);
  EXPECT_FALSE(b_->try_acquire("job1"));
  EXPECT_EQ(heartbeat.held(), 1u);
  EXPECT_TRUE(lost().empty());
}

TEST_F(LeaseHeartbeatTest, ALeaseLetGoOfLapsesAndIsTakenOver) {
  LeaseHeartbeat heartbeat(redis_->endpoint(), {"a", ttl_}, record_lost());
  const auto lease = a_->try_acquire("job1");
  ASSERT_TRUE(lease);
  heartbeat.hold(*lease);
  heartbeat.let_go("job1");
  EXPECT_EQ(heartbeat.held(), 0u);
  std::this_thread::sleep_for(ttl_ + 100ms);
  EXPECT_TRUE(b_->try_acquire("job1"));
  std::this_thread::sleep_for(ttl_);
  EXPECT_TRUE(lost().empty());  // let go of is not lost
}

TEST_F(LeaseHeartbeatTest, ALeaseTakenAwayIsSaidLostAndNoLongerHeld) {
  LeaseHeartbeat heartbeat(redis_->endpoint(), {"a", ttl_}, record_lost());
  const auto kept = a_->try_acquire("kept");
  const auto taken = a_->try_acquire("taken");
  ASSERT_TRUE(kept && taken);
  heartbeat.hold(*kept);
  heartbeat.hold(*taken);
  // Someone deletes the lease (as an expiry and a takeover would leave it: not "a"'s).
  redis_b_->command({"SET", "rulestream:job:taken:lease", "b#9"});
  wait_for_a_loss();
  EXPECT_EQ(lost(), std::vector<std::string>{"taken"});
  EXPECT_EQ(heartbeat.held(), 1u);
  EXPECT_EQ(redis_b_->command({"GET", "rulestream:job:taken:lease"}).as_string(), "b#9");
  EXPECT_FALSE(b_->try_acquire("kept"));
}

TEST_F(LeaseHeartbeatTest, LeasesNotRenewedForATtlBecauseRedisDoesNotAnswerAreLost) {
  LeaseHeartbeat heartbeat(redis_->endpoint(), {"a", ttl_}, record_lost());
  const auto lease = a_->try_acquire("job1");
  ASSERT_TRUE(lease);
  heartbeat.hold(*lease);
  // Renewals time out while the server is frozen; after a TTL without one the lease is lost
  // (the server, when it goes on, finds it expired by its clock).
  redis_->freeze(4 * ttl_);
  EXPECT_EQ(lost(), std::vector<std::string>{"job1"});
  EXPECT_EQ(heartbeat.held(), 0u);
  EXPECT_TRUE(b_->try_acquire("job1"));
}

TEST_F(LeaseHeartbeatTest, LeasesOfARestartedRedisAreLost) {
  LeaseHeartbeat heartbeat(redis_->endpoint(), {"a", ttl_}, record_lost());
  const auto lease = a_->try_acquire("job1");
  ASSERT_TRUE(lease);
  heartbeat.hold(*lease);
  // The server goes and comes back empty (nothing saved): the heartbeat's connection breaks,
  // and when it reconnects the lease is not there. Either way the lease is lost.
  ASSERT_TRUE(redis_->restart());
  wait_for_a_loss();
  EXPECT_EQ(lost(), std::vector<std::string>{"job1"});
  EXPECT_EQ(heartbeat.held(), 0u);
}

}  // namespace
}  // namespace rulestream
