// Job states shared through Redis against a real redis-server: written under the fence.
#include "apps/coordination/job_states.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "tests/support/redis_test_server.hpp"

namespace rulestream {
namespace {

using namespace std::chrono_literals;

// Two instances, "a" and "b", each with its connection, leases and view of the states.
class JobStatesTest : public testing::RedisServerTest {
 protected:
  struct Instance {
    Instance(const RedisEndpoint& endpoint, const std::string& name)
        : redis(endpoint), leases(redis, {name, 200ms}), states(redis) {}
    RedisConnection redis;
    JobLeases leases;
    JobStates states;
  };

  void SetUp() override {
    RedisServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    a_ = std::make_unique<Instance>(redis_->endpoint(), "a");
    b_ = std::make_unique<Instance>(redis_->endpoint(), "b");
  }

  std::unique_ptr<Instance> a_, b_;
};

TEST_F(JobStatesTest, OwnersWriteTheirJobsAndEveryoneReadsAll) {
  const auto job1 = a_->leases.try_acquire("job1");
  const auto job2 = b_->leases.try_acquire("job2");
  ASSERT_TRUE(job1 && job2);
  EXPECT_TRUE(a_->states.publish(*job1, "{\"state\":\"Running\"}"));
  EXPECT_TRUE(b_->states.publish(*job2, "{\"state\":\"Finished\"}"));
  const std::map<std::string, std::string> expected{{"job1", "{\"state\":\"Running\"}"},
                                                    {"job2", "{\"state\":\"Finished\"}"}};
  EXPECT_EQ(a_->states.all(), expected);
  EXPECT_EQ(b_->states.all(), expected);
}

TEST_F(JobStatesTest, AFormerOwnerOverwritesNothing) {
  const auto first = a_->leases.try_acquire("job1");
  ASSERT_TRUE(first);
  EXPECT_TRUE(a_->states.publish(*first, "a's"));
  std::this_thread::sleep_for(300ms);  // "a" pauses past its lease; "b" takes the job over
  const auto second = b_->leases.try_acquire("job1");
  ASSERT_TRUE(second);
  EXPECT_TRUE(b_->states.publish(*second, "b's"));
  EXPECT_FALSE(a_->states.publish(*first, "a's, stale"));
  EXPECT_EQ(b_->states.all().at("job1"), "b's");
}

}  // namespace
}  // namespace rulestream
