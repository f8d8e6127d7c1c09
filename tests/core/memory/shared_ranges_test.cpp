#include "core/memory/shared_ranges.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace rulestream {
namespace {

// Threads draining at once run every index exactly once, in ranges no longer than the grain,
// the last one cut at the count.
TEST(SharedRanges, EveryIndexRunsExactlyOnceAcrossThreads) {
  constexpr std::size_t kCount = 100'003;
  std::vector<std::atomic<int>> runs(kCount);
  std::atomic<std::size_t> longest{0};
  SharedRanges ranges(kCount, 64, [&](std::size_t begin, std::size_t end) {
    ASSERT_LT(begin, end);
    ASSERT_LE(end, kCount);
    std::size_t seen = longest.load();
    while (end - begin > seen && !longest.compare_exchange_weak(seen, end - begin)) {
    }
    for (std::size_t i = begin; i != end; ++i) runs[i]++;
  });
  std::vector<std::thread> threads;
  std::atomic<int> ran_any{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      if (ranges.drain()) ran_any++;
    });
  }
  const bool owner_ran = ranges.drain();
  for (auto& thread : threads) thread.join();
  ranges.wait_done();
  ranges.rethrow();  // nothing to throw
  for (std::size_t i = 0; i < kCount; ++i) ASSERT_EQ(runs[i].load(), 1) << "index " << i;
  EXPECT_EQ(longest.load(), 64u);
  EXPECT_GE(ran_any.load() + (owner_ran ? 1 : 0), 1);
  EXPECT_FALSE(ranges.drain()) << "nothing is left to run";
}

TEST(SharedRanges, NothingToRunWhenEmpty) {
  int calls = 0;
  SharedRanges ranges(0, 8, [&](std::size_t, std::size_t) { calls++; });
  EXPECT_FALSE(ranges.drain());
  ranges.wait_done();
  ranges.rethrow();
  EXPECT_EQ(calls, 0);
}

// The first exception is kept and rethrown for the owner; the ranges after it are skipped, but
// all are counted done, so the owner's wait ends.
TEST(SharedRanges, TheFirstExceptionReachesTheOwner) {
  std::vector<std::size_t> started;
  SharedRanges ranges(10, 1, [&](std::size_t begin, std::size_t) {
    started.push_back(begin);
    if (begin == 3) throw std::runtime_error("range 3 failed");
  });
  EXPECT_TRUE(ranges.drain());
  ranges.wait_done();
  EXPECT_EQ(started, (std::vector<std::size_t>{0, 1, 2, 3}));
  try {
    ranges.rethrow();
    FAIL() << "expected the range's exception";
  } catch (const std::runtime_error& error) {
    EXPECT_EQ(std::string(error.what()), "range 3 failed");
  }
}

}  // namespace
}  // namespace rulestream
