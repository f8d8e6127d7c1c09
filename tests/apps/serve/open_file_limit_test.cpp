#include "apps/serve/open_file_limit.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <string>

namespace rulestream {
namespace {

TEST(OpenFileLimit, RaisesTheSoftLimitToTheHardOneAndSaysFromWhatOnce) {
  rlimit limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_max == RLIM_INFINITY || limit.rlim_max < 512) {
    GTEST_SKIP() << "a hard open-file limit of " << limit.rlim_max << " leaves no room to lower";
  }
  // A soft limit below the hard one, as many systems start a process (1024 under 524288).
  rlimit lowered = limit;
  lowered.rlim_cur = 256;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &lowered), 0);

  EXPECT_EQ(raise_open_file_limit(),
            "raised the open-file limit from 256 to " + std::to_string(limit.rlim_max));
  rlimit now{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &now), 0);
  EXPECT_EQ(now.rlim_cur, limit.rlim_max);
  EXPECT_EQ(now.rlim_max, limit.rlim_max);
  EXPECT_EQ(raise_open_file_limit(), "");  // already at the hard limit: nothing to say

  ::setrlimit(RLIMIT_NOFILE, &limit);
}

}  // namespace
}  // namespace rulestream
