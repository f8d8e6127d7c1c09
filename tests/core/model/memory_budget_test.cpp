// MemoryBudget: one job's bytes, taken and given back by caches (try_reserve, release,
// MemoryReservation) and reclaimed from them for work; never more than the limit held at once.
#include "core/model/memory_budget.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <latch>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace rulestream {
namespace {

// A cache of entries of given sizes, oldest evicted first, as the store's caches behave.
class FakeCache final : public MemoryBudget::Reclaimer {
 public:
  explicit FakeCache(MemoryBudget& budget) : budget_(budget) { budget_.add_reclaimer(*this); }
  ~FakeCache() {
    budget_.remove_reclaimer(*this);
    budget_.release(held());
  }

  bool put(std::size_t bytes) {
    if (!budget_.try_reserve(bytes)) return false;
    std::lock_guard lock(mutex_);
    entries_.push_back(bytes);
    return true;
  }
  std::size_t reclaim(std::size_t bytes) override {
    std::lock_guard lock(mutex_);
    std::size_t given = 0;
    while (given < bytes && !entries_.empty()) {
      given += entries_.front();
      budget_.release(entries_.front());
      entries_.pop_front();
    }
    asked += bytes;
    return given;
  }
  std::size_t held() const {
    std::lock_guard lock(mutex_);
    std::size_t bytes = 0;
    for (const std::size_t each : entries_) bytes += each;
    return bytes;
  }

  std::size_t asked = 0;

 private:
  MemoryBudget& budget_;
  mutable std::mutex mutex_;
  std::deque<std::size_t> entries_;
};

TEST(MemoryBudget, TakesWhatFitsAndGivesItBack) {
  MemoryBudget budget(100);
  EXPECT_TRUE(budget.try_reserve(60));
  EXPECT_FALSE(budget.try_reserve(41));
  EXPECT_TRUE(budget.try_reserve(40));
  EXPECT_EQ(budget.reserved(), 100u);
  EXPECT_FALSE(budget.try_reserve(1));
  budget.release(60);
  EXPECT_EQ(budget.reserved(), 40u);
  EXPECT_TRUE(budget.try_reserve(50));
  EXPECT_EQ(budget.peak_reserved(), 100u);
  EXPECT_FALSE(budget.try_reserve(static_cast<std::size_t>(-1)));  // no wrap-around
}

TEST(MemoryBudget, AReservationGivesItsBytesBackWhereverItEnds) {
  MemoryBudget budget(100);
  {
    MemoryReservation held = MemoryReservation::try_take(budget, 70);
    ASSERT_TRUE(held);
    EXPECT_EQ(held.bytes(), 70u);
    EXPECT_FALSE(MemoryReservation::try_take(budget, 31));
    MemoryReservation moved = std::move(held);
    EXPECT_FALSE(held);  // NOLINT(bugprone-use-after-move): moved from holds nothing
    EXPECT_EQ(budget.reserved(), 70u);
    MemoryReservation other = MemoryReservation::try_take(budget, 30);
    other = std::move(moved);  // gives other's 30 back, takes the 70
    EXPECT_EQ(budget.reserved(), 70u);
  }
  EXPECT_EQ(budget.reserved(), 0u);
}

TEST(MemoryBudget, ReclaimAsksTheCachesInTurnForWhatIsMissing) {
  MemoryBudget budget(100);
  FakeCache first(budget), second(budget);
  ASSERT_TRUE(first.put(20));
  ASSERT_TRUE(first.put(20));
  ASSERT_TRUE(second.put(30));
  EXPECT_EQ(budget.reclaim(50), 70u);  // whole entries: the first's 40, then 30 more
  EXPECT_EQ(first.held(), 0u);
  EXPECT_EQ(second.held(), 0u);
  EXPECT_EQ(second.asked, 10u);
  EXPECT_EQ(budget.reserved(), 0u);
  EXPECT_EQ(budget.reclaim(10), 0u);  // nothing left to give
}

// Threads taking and giving back bytes at random: what they hold together, counted apart from
// the budget, is never more than the limit, and everything comes back.
TEST(MemoryBudget, ThreadsTogetherNeverHoldMoreThanTheLimit) {
  constexpr std::size_t kLimit = 1000;
  MemoryBudget budget(kLimit);
  std::atomic<std::size_t> held{0};
  std::atomic<std::size_t> most_held{0};
  std::atomic<std::size_t> refusals{0};
  std::latch start(8);  // all at once, so that they meet
  std::vector<std::thread> threads;
  for (unsigned seed = 0; seed < 8; ++seed) {
    threads.emplace_back([&, seed] {
      start.arrive_and_wait();
      std::mt19937 random(seed);
      std::uniform_int_distribution<std::size_t> size(1, 300);
      for (int i = 0; i < 20000; ++i) {
        const std::size_t bytes = size(random);
        if (!budget.try_reserve(bytes)) {
          ++refusals;
          continue;
        }
        const std::size_t now = held.fetch_add(bytes) + bytes;
        std::size_t most = most_held.load();
        while (now > most && !most_held.compare_exchange_weak(most, now)) {
        }
        std::this_thread::yield();  // holders hold a while: let the others meet them
        held.fetch_sub(bytes);
        budget.release(bytes);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_LE(most_held.load(), kLimit);
  EXPECT_LE(budget.peak_reserved(), kLimit);
  EXPECT_GT(refusals.load(), 0u) << "the threads never met the limit: the test shows nothing";
  EXPECT_EQ(budget.reserved(), 0u);
}

}  // namespace
}  // namespace rulestream
