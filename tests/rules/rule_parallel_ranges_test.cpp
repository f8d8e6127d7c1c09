// Rule::for_ranges_in_parallel: a rule's per-tensor work within a step, spread over the arena's
// threads. Every item exactly once, in ranges no larger than asked; small work stays on the
// calling thread and counts as serial; the caller's share of split work is counted apart, once.
#include <gtest/gtest.h>
#include <tbb/task_arena.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "apps/simulator/job_simulator.hpp"
#include "core/model/busy_timer.hpp"
#include "rules/rule.hpp"
#include "tests/support/test_support.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {
namespace {

using testing::TempDir;

// A rule that only lends the test its parallel sections.
class RangesRule final : public Rule {
 public:
  using Rule::Rule;
  std::string_view name() const override { return "Ranges"; }
  bool invoke_at_step(std::int64_t) override { return false; }
  void run(std::size_t count, std::size_t grain,
           const std::function<void(std::size_t, std::size_t)>& body) const {
    for_ranges_in_parallel(count, grain, body);
  }
};

Trial small_trial(const TempDir& dir) {
  JobSimulatorOptions options;
  options.output = dir.path() / "job";
  options.steps = 1;
  options.tensor_size = 4;
  JobSimulator(options).run();
  return Trial::open(options.output.string());
}

void spin(std::chrono::microseconds cpu) {
  const auto start = BusyTimer::now();
  while (BusyTimer::now() - start < cpu) {
  }
}

TEST(RuleParallelRanges, CoverEveryItemOnceInRangesNoLargerThanTheGrain) {
  TempDir dir;
  const RangesRule rule(small_trial(dir));
  constexpr std::size_t kCount = 1000;
  constexpr std::size_t kGrain = 7;
  std::vector<std::atomic<int>> seen(kCount);
  std::atomic<std::size_t> largest{0};
  std::mutex mutex;
  std::set<std::thread::id> threads;
  tbb::task_arena arena(4);
  arena.execute([&] {
    rule.run(kCount, kGrain, [&](std::size_t begin, std::size_t end) {
      ASSERT_LT(begin, end);
      std::size_t size = end - begin;
      std::size_t known = largest.load();
      while (size > known && !largest.compare_exchange_weak(known, size)) {
      }
      for (std::size_t i = begin; i != end; ++i) seen[i]++;
      spin(std::chrono::microseconds(20));
      const std::lock_guard lock(mutex);
      threads.insert(std::this_thread::get_id());
    });
  });
  for (std::size_t i = 0; i < kCount; ++i) EXPECT_EQ(seen[i].load(), 1) << "item " << i;
  EXPECT_LE(largest.load(), kGrain);
  // 143 ranges or more of 20 us each: the work was split, so the caller's share was counted.
  EXPECT_GT(rule.parallel_section_cpu().count(), 0);
}

TEST(RuleParallelRanges, WorkWithinOneGrainRunsOnTheCallerAndCountsAsSerial) {
  TempDir dir;
  const RangesRule rule(small_trial(dir));
  std::vector<std::pair<std::size_t, std::size_t>> calls;
  std::thread::id ran_on;
  const auto before = rule.parallel_section_cpu();
  rule.run(5, 5, [&](std::size_t begin, std::size_t end) {
    calls.emplace_back(begin, end);
    ran_on = std::this_thread::get_id();
    spin(std::chrono::microseconds(200));
  });
  EXPECT_EQ(calls, (std::vector<std::pair<std::size_t, std::size_t>>{{0, 5}}));
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_EQ(rule.parallel_section_cpu(), before);
  rule.run(0, 5, [&](std::size_t, std::size_t) { ADD_FAILURE() << "no items, no call"; });
}

// With one thread every range runs on the caller: all of it is the caller's share of parallel
// work (at least the CPU the ranges burnt), none of it the rule's serial work.
TEST(RuleParallelRanges, TheCallersShareOfSplitWorkIsCounted) {
  TempDir dir;
  const RangesRule rule(small_trial(dir));
  tbb::task_arena arena(1);
  arena.execute([&] {
    rule.run(4, 1, [](std::size_t, std::size_t) { spin(std::chrono::milliseconds(1)); });
  });
  EXPECT_GE(rule.parallel_section_cpu(), std::chrono::milliseconds(4));
}

// A range that starts a section of its own is counted once, in the outer section (counted at
// both levels, the caller's 4 ms would be subtracted from its serial node twice: 8 ms).
TEST(RuleParallelRanges, ASectionInsideARangeIsCountedOnce) {
  TempDir dir;
  const RangesRule rule(small_trial(dir));
  const auto before = rule.parallel_section_cpu();
  tbb::task_arena arena(1);
  arena.execute([&] {
    rule.run(2, 1, [&](std::size_t, std::size_t) {
      rule.run(2, 1, [](std::size_t, std::size_t) { spin(std::chrono::milliseconds(1)); });
    });
  });
  const auto counted = rule.parallel_section_cpu() - before;
  EXPECT_GE(counted, std::chrono::milliseconds(4));
  EXPECT_LT(counted, std::chrono::milliseconds(6));
}

// What the caller lent another node inside a section (a lookup that ran the store's ingestion
// while it waited for the store's lock) is counted as lent, not as the rule's parallel work: a
// serial node subtracts both, and would otherwise subtract it twice.
TEST(RuleParallelRanges, CpuLentToAnotherNodeInsideASectionIsNotTheSections) {
  TempDir dir;
  const RangesRule rule(small_trial(dir));
  const auto lent_before = thread_cpu_lent();
  const auto before = rule.parallel_section_cpu();
  tbb::task_arena arena(1);
  arena.execute([&] {
    rule.run(2, 1, [](std::size_t, std::size_t) {
      {
        BusyTimer lending(thread_cpu_lent());
        spin(std::chrono::milliseconds(2));
      }
      spin(std::chrono::milliseconds(1));
    });
  });
  EXPECT_GE(thread_cpu_lent() - lent_before, std::chrono::milliseconds(4));
  const auto counted = rule.parallel_section_cpu() - before;
  EXPECT_GE(counted, std::chrono::milliseconds(2));
  EXPECT_LT(counted, std::chrono::milliseconds(4));
}

TEST(RuleParallelRanges, AnExceptionFromARangeReachesTheCaller) {
  TempDir dir;
  const RangesRule rule(small_trial(dir));
  tbb::task_arena arena(2);
  arena.execute([&] {
    EXPECT_THROW(rule.run(100, 10,
                          [](std::size_t begin, std::size_t end) {
                            if (begin <= 42 && 42 < end) throw std::runtime_error("item 42");
                          }),
                 std::runtime_error);
  });
}

}  // namespace
}  // namespace rulestream
