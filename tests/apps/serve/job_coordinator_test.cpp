// What an instance shows of a job it stops holding, against a real redis-server: the document it
// published last, from the moment it lets the job go, not an older one read back before.
#include "apps/serve/job_coordinator.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "tests/support/redis_test_server.hpp"

namespace rulestream {
namespace {

using namespace std::chrono_literals;

class JobCoordinatorTest : public testing::RedisServerTest {
 protected:
  CoordinatorOptions options(const std::string& instance) const {
    CoordinatorOptions options;
    options.endpoint = redis_->endpoint();
    options.lease_ttl = 300ms;
    options.instance = instance;
    return options;
  }
};

// /api/jobs and /metrics read documents() for jobs not held here: a job that finished here must
// not go back to the Running document the last refresh read (it did until the next refresh).
TEST_F(JobCoordinatorTest, AJobFinishedHereShowsItsLastDocumentAsSoonAsItIsNoLongerHeld) {
  JobCoordinator coordinator(options("a"));
  const auto lease = coordinator.try_acquire("job0");
  ASSERT_TRUE(lease);
  ASSERT_TRUE(coordinator.publish(*lease, "{\"state\":\"Running\"}"));
  coordinator.refresh_documents();
  ASSERT_EQ(coordinator.documents().at("job0"), "{\"state\":\"Running\"}");

  coordinator.finish(*lease, "Finished", "{\"state\":\"Finished\"}");
  EXPECT_FALSE(coordinator.holds("job0"));
  EXPECT_EQ(coordinator.documents().at("job0"), "{\"state\":\"Finished\"}");  // no refresh yet
  EXPECT_EQ(coordinator.ended("job0"), "Finished");
  coordinator.refresh_documents();
  EXPECT_EQ(coordinator.documents().at("job0"), "{\"state\":\"Finished\"}");
}

// A former owner's document is fenced out of Redis, and so out of what it shows too: after a
// refresh it shows the new owner's, and its own stale publish changes nothing.
TEST_F(JobCoordinatorTest, AFencedPublishShowsNothingOfItsOwn) {
  JobCoordinator a(options("a"));
  JobCoordinator b(options("b"));
  const auto first = a.try_acquire("job0");
  ASSERT_TRUE(first);
  a.hand_over(*first);  // released: "b" may take it at once
  const auto second = b.try_acquire("job0");
  ASSERT_TRUE(second);
  ASSERT_TRUE(b.publish(*second, "b's"));
  a.refresh_documents();
  EXPECT_FALSE(a.publish(*first, "a's, stale"));
  EXPECT_EQ(a.documents().at("job0"), "b's");
}

}  // namespace
}  // namespace rulestream
