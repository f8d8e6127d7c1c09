// GrowingReservation: work taking bytes as it goes. Caches are evicted first; then the oldest
// work waits for younger work's bytes and younger work yields; only what cannot fit alone is
// refused. Never a deadlock, never more than the limit.
#include "core/model/growing_reservation.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <future>
#include <latch>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace rulestream {
namespace {

using namespace std::chrono_literals;
using Grant = GrowingReservation::Grant;

// A cache whose entries (whole, oldest first) the budget may reclaim.
class EvictingCache final : public MemoryBudget::Reclaimer {
 public:
  explicit EvictingCache(MemoryBudget& budget) : budget_(budget) { budget_.add_reclaimer(*this); }
  ~EvictingCache() {
    budget_.remove_reclaimer(*this);
    std::lock_guard lock(mutex_);
    for (const std::size_t each : entries_) budget_.release(each);
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
    return given;
  }

 private:
  MemoryBudget& budget_;
  std::mutex mutex_;
  std::deque<std::size_t> entries_;
};

void wait_for_waits(const MemoryBudget& budget, std::uint64_t waits) {
  while (budget.waits() < waits) std::this_thread::sleep_for(1ms);
}

TEST(GrowingReservation, GrowsAndGivesEverythingBackWhenItEnds) {
  MemoryBudget budget(100);
  {
    GrowingReservation work(budget);
    EXPECT_EQ(work.grow(30), Grant::Granted);
    EXPECT_EQ(work.grow(30), Grant::Granted);
    EXPECT_EQ(work.bytes(), 60u);
    EXPECT_EQ(budget.reserved(), 60u);
  }
  EXPECT_EQ(budget.reserved(), 0u);
}

TEST(GrowingReservation, WhatCannotFitAloneIsRefusedAtOnce) {
  MemoryBudget budget(100);
  GrowingReservation work(budget);
  ASSERT_EQ(work.grow(80), Grant::Granted);
  EXPECT_EQ(work.grow(21), Grant::Refused);
  EXPECT_EQ(work.bytes(), 80u);  // what it held, it still holds
  EXPECT_EQ(budget.waits(), 0u);
}

TEST(GrowingReservation, CachesAreEvictedBeforeAnythingElse) {
  MemoryBudget budget(100);
  EvictingCache cache(budget);
  for (int i = 0; i < 9; ++i) ASSERT_TRUE(cache.put(10));
  GrowingReservation work(budget);
  EXPECT_EQ(work.grow(45), Grant::Granted);
  // 35 bytes short: four entries (40 bytes) leave, five stay beside the work's 45.
  EXPECT_EQ(budget.reserved(), 95u);
  EXPECT_EQ(budget.waits(), 0u);
}

// Bytes held by something that cannot give them back (no reclaimer) and no other work: waiting
// would never end, so the work is refused.
TEST(GrowingReservation, WithNoOtherWorkToWaitForItIsRefused) {
  MemoryBudget budget(100);
  ASSERT_TRUE(budget.try_reserve(50));
  GrowingReservation work(budget);
  EXPECT_EQ(work.grow(60), Grant::Refused);
  EXPECT_EQ(budget.waits(), 0u);
}

// The oldest work waits, holding its bytes, for younger work to give some back; it is woken
// then, and not before.
TEST(GrowingReservation, TheOldestWaitsForYoungerWorkAndIsWokenWhenItEnds) {
  MemoryBudget budget(100);
  GrowingReservation oldest(budget);
  auto younger = std::make_unique<GrowingReservation>(budget);
  ASSERT_EQ(oldest.grow(30), Grant::Granted);
  ASSERT_EQ(younger->grow(60), Grant::Granted);
  std::atomic<bool> returned{false};
  auto grant = std::async(std::launch::async, [&] {
    const Grant granted = oldest.grow(50);
    returned = true;
    return granted;
  });
  wait_for_waits(budget, 1);
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(returned) << "the oldest did not wait for the younger work's bytes";
  younger.reset();
  EXPECT_EQ(grant.get(), Grant::Granted);
  EXPECT_EQ(budget.reserved(), 80u);
}

// Younger work that cannot grow gives back what it holds (so the oldest never waits on work
// that waits) and waits until it is the oldest.
TEST(GrowingReservation, YoungerWorkYieldsAndWaitsForTheOlderToEnd) {
  MemoryBudget budget(100);
  auto oldest = std::make_unique<GrowingReservation>(budget);
  GrowingReservation younger(budget);
  ASSERT_EQ(oldest->grow(70), Grant::Granted);
  ASSERT_EQ(younger.grow(20), Grant::Granted);
  ASSERT_EQ(younger.grow(20), Grant::Yield);
  std::atomic<bool> returned{false};
  auto waited = std::async(std::launch::async, [&] {
    younger.yield_and_wait();
    returned = true;
  });
  wait_for_waits(budget, 1);
  EXPECT_EQ(budget.reserved(), 70u);  // the younger's 20 went back at once
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(returned) << "the younger work did not wait for the older";
  EXPECT_EQ(oldest->grow(30), Grant::Granted);  // what the younger gave back
  oldest.reset();
  waited.get();
  EXPECT_EQ(younger.bytes(), 0u);
  EXPECT_EQ(younger.grow(90), Grant::Granted);
}

TEST(GrowingReservation, SettledBytesStayTakenAndLetYoungerWorkGoFirst) {
  MemoryBudget budget(100);
  auto oldest = std::make_unique<GrowingReservation>(budget);
  GrowingReservation younger(budget);
  ASSERT_EQ(oldest->grow(40), Grant::Granted);
  MemoryReservation kept = oldest->settle();
  EXPECT_EQ(kept.bytes(), 40u);
  EXPECT_EQ(oldest->bytes(), 0u);
  EXPECT_EQ(budget.reserved(), 40u);
  // The settled bytes are a cache's now, not work in progress: the younger is the oldest, and
  // with nothing to reclaim and no other work, what does not fit is refused rather than waited.
  younger.yield_and_wait();  // returns at once: nothing older is in progress
  EXPECT_EQ(younger.grow(70), Grant::Refused);
  kept.reset();
  EXPECT_EQ(younger.grow(70), Grant::Granted);
}

// Threads doing work of random sizes against one budget and a cache: each piece of work
// restarts when told to yield, as decompress_file does. Every piece ends (no deadlock: the
// test would hang), none is refused (each fits alone), and what they hold together, counted
// apart from the budget, never passes the limit.
TEST(GrowingReservation, ThreadsDoingWorkNeverPassTheLimitAndAllFinish) {
  constexpr std::size_t kLimit = 1000;
  MemoryBudget budget(kLimit);
  EvictingCache cache(budget);
  std::atomic<std::size_t> held{0};
  std::atomic<std::size_t> most_held{0};
  std::atomic<int> finished{0};
  std::atomic<int> refused{0};
  const auto hold = [&](std::size_t bytes) {
    const std::size_t now = held.fetch_add(bytes) + bytes;
    std::size_t most = most_held.load();
    while (now > most && !most_held.compare_exchange_weak(most, now)) {
    }
  };
  constexpr int kThreads = 6, kPieces = 300;
  std::latch start(kThreads);  // all at once, so that their work overlaps
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      std::mt19937 random(t);
      std::uniform_int_distribution<std::size_t> target(50, 700), step(10, 60);
      for (int piece = 0; piece < kPieces; ++piece) {
        if (piece % 3 == 0) cache.put(step(random));  // caches fill between pieces of work
        const std::size_t wanted = target(random);
        GrowingReservation work(budget);
        std::size_t counted = 0;
        bool done = false;
        while (!done) {
          const std::size_t more = std::min(step(random), wanted - work.bytes());
          const Grant grant = work.grow(more);
          if (grant == Grant::Refused) {
            ++refused;
            break;
          }
          if (grant == Grant::Yield) {
            held.fetch_sub(counted);
            counted = 0;
            work.yield_and_wait();
            continue;
          }
          hold(more);
          counted += more;
          done = work.bytes() == wanted;
          std::this_thread::yield();  // work takes time: let the others meet it
        }
        held.fetch_sub(counted);
        if (done) ++finished;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(finished.load(), kThreads * kPieces);
  EXPECT_EQ(refused.load(), 0);
  EXPECT_LE(most_held.load(), kLimit);
  EXPECT_LE(budget.peak_reserved(), kLimit);
  EXPECT_GT(budget.waits(), 0u) << "no work ever waited: the test shows nothing";
}

}  // namespace
}  // namespace rulestream
