#include "core/memory/reader_slots_mutex.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <shared_mutex>
#include <thread>
#include <vector>

#include "core/model/busy_timer.hpp"

namespace rulestream {
namespace {

using namespace std::chrono_literals;

// A writer changes two numbers one after the other under the lock; readers under the shared lock
// must always see them equal (and ThreadSanitizer, which knows atomics, sees no race).
TEST(ReaderSlotsMutex, ReadersNeverSeeAWriteHalfDone) {
  ReaderSlotsMutex mutex;
  std::int64_t first = 0;
  std::int64_t second = 0;
  std::atomic<bool> done{false};
  std::atomic<std::int64_t> torn{0};
  std::atomic<std::int64_t> reads{0};
  std::vector<std::thread> readers;
  // Two readers: enough to read while the writer writes, without four threads spinning for
  // seconds and starving the test run beside this one on a two-core machine.
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      while (!done) {
        std::shared_lock lock(mutex);
        if (first != second) torn++;
        reads++;
      }
    });
  }
  // Writes go on until the readers have read plenty while they happen (bounded in time, for a
  // machine so loaded that they cannot). Writers go first, so a writer that never paused
  // would keep them out: it pauses between writes, as the store's writer does between files.
  // A sleep, not a yield: readers that never block on two cores left a yielding writer one
  // write per time slice, 5,000 in the 30 s bound, about half the time.
  std::int64_t writes = 0;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while ((writes < 5000 || reads < 5000) && std::chrono::steady_clock::now() < deadline) {
    {
      std::unique_lock lock(mutex);
      ++first;
      ++second;
    }
    ++writes;
    std::this_thread::sleep_for(10us);
  }
  done = true;
  for (auto& reader : readers) reader.join();
  EXPECT_EQ(torn, 0);
  EXPECT_GE(reads, 5000) << "writes " << writes;
  EXPECT_EQ(first, writes);
}

TEST(ReaderSlotsMutex, ReadersHoldItTogether) {
  ReaderSlotsMutex mutex;
  std::shared_lock held(mutex);
  // Another thread's shared lock does not wait for this one.
  auto other = std::async(std::launch::async, [&] { std::shared_lock lock(mutex); });
  EXPECT_EQ(other.wait_for(10s), std::future_status::ready);
}

TEST(ReaderSlotsMutex, AWriterWaitsForTheReadersAndTheyForIt) {
  ReaderSlotsMutex mutex;
  std::atomic<bool> written{false};
  auto reader_release = std::make_unique<std::shared_lock<ReaderSlotsMutex>>(mutex);
  auto writer = std::async(std::launch::async, [&] {
    std::unique_lock lock(mutex);
    written = true;
  });
  EXPECT_EQ(writer.wait_for(100ms), std::future_status::timeout);  // a reader holds it
  EXPECT_FALSE(written);
  reader_release.reset();
  ASSERT_EQ(writer.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(written);

  // Held by a writer: a reader waits until it lets go, then sees what it wrote.
  std::unique_lock exclusive(mutex);
  written = false;
  auto reader = std::async(std::launch::async, [&] {
    std::shared_lock lock(mutex);
    return written.load();
  });
  EXPECT_EQ(reader.wait_for(100ms), std::future_status::timeout);
  written = true;
  exclusive.unlock();
  ASSERT_EQ(reader.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(reader.get());
}

// A thread reading under the lock may take it again (a lookup inside a listing) while a writer
// waits for that thread's first hold: the nested read goes ahead instead of waiting for the
// writer, which would wait for it forever.
TEST(ReaderSlotsMutex, ANestedReadDoesNotWaitForAWaitingWriter) {
  ReaderSlotsMutex mutex;
  std::shared_lock outer(mutex);
  auto writer = std::async(std::launch::async, [&] { std::unique_lock lock(mutex); });
  EXPECT_EQ(writer.wait_for(50ms), std::future_status::timeout);  // waiting for `outer`
  auto nested = std::async(std::launch::deferred, [&] { std::shared_lock inner(mutex); });
  nested.get();  // on this thread: returns rather than hangs
  outer.unlock();
  EXPECT_EQ(writer.wait_for(10s), std::future_status::ready);
}

// Waits (up to a generous deadline) until `done` holds; false when it never did.
template <typename Done>
bool eventually(Done&& done) {
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// A reader that meets a writer runs the work the writer offers, whether it arrives after the
// offer or was already asleep when it came; it takes the lock once the writer lets it go. The
// writer here does none of its ranges itself, so they are done only if the reader helps.
TEST(ReaderSlotsMutex, AReaderHeldUpByTheWriterRunsWhatTheWriterOffers) {
  for (const bool reader_first : {false, true}) {
    ReaderSlotsMutex mutex;
    const auto writer_helped_before = ReaderSlotsMutex::helped_cpu();
    mutex.lock();
    std::atomic<int> ran_by_reader{0};
    std::atomic<int> ran{0};
    static thread_local bool on_reader = false;
    std::atomic<bool> reader_started{false};
    // Each range keeps its thread's CPU busy for 2 ms: what helping cost is counted.
    SharedRanges ranges(5, 1, [&](std::size_t, std::size_t) {
      if (on_reader) ran_by_reader++;
      const auto until = BusyTimer::now() + 2ms;
      while (BusyTimer::now() < until) {
      }
      ran++;
    });
    std::atomic<bool> read{false};
    std::atomic<std::int64_t> reader_helped_ns{-1};
    const auto start_reader = [&] {
      return std::thread([&] {
        on_reader = true;
        reader_started = true;
        std::shared_lock lock(mutex);
        read = true;
        reader_helped_ns = ReaderSlotsMutex::helped_cpu().count();
      });
    };
    std::thread reader;
    if (reader_first) {
      reader = start_reader();
      EXPECT_TRUE(eventually([&] { return reader_started.load(); }));
      std::this_thread::sleep_for(50ms);  // asleep in lock_shared, most likely
      mutex.offer(ranges);
    } else {
      mutex.offer(ranges);
      reader = start_reader();
    }
    EXPECT_TRUE(eventually([&] { return ran.load() == 5; })) << "reader first: " << reader_first;
    ranges.wait_done();
    mutex.withdraw();
    EXPECT_FALSE(read.load()) << "the reader went ahead of the writer";
    mutex.unlock();
    reader.join();
    EXPECT_TRUE(read.load());
    EXPECT_EQ(ran_by_reader.load(), 5) << "reader first: " << reader_first;
    // The reader's 10 ms of the writer's work are counted as its helping; the writer, which ran
    // none of it while waiting for a shared lock, has none.
    EXPECT_GE(reader_helped_ns.load(), 10'000'000) << "reader first: " << reader_first;
    EXPECT_EQ(ReaderSlotsMutex::helped_cpu(), writer_helped_before);
  }
}

// Once withdrawn, an offer is never run: a reader arriving afterwards just waits.
TEST(ReaderSlotsMutex, AWithdrawnOfferIsLeftAlone) {
  ReaderSlotsMutex mutex;
  mutex.lock();
  std::atomic<int> ran{0};
  SharedRanges ranges(3, 1, [&](std::size_t, std::size_t) { ran++; });
  mutex.offer(ranges);
  mutex.withdraw();
  std::atomic<bool> read{false};
  std::thread reader([&] {
    std::shared_lock lock(mutex);
    read = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(read.load());
  mutex.unlock();
  reader.join();
  EXPECT_TRUE(read.load());
  EXPECT_EQ(ran.load(), 0);
}

// How long readers were held up by a writer is counted, less what they spent running its work:
// a reader that waits 100 ms for a writer adds about that; one that finds no writer adds nothing.
TEST(ReaderSlotsMutex, TheTimeReadersWaitForAWriterIsCounted) {
  ReaderSlotsMutex mutex;
  const auto before = ReaderSlotsMutex::readers_held_up();
  { std::shared_lock lock(mutex); }
  EXPECT_EQ(ReaderSlotsMutex::readers_held_up(), before) << "no writer, no wait";

  mutex.lock();
  std::thread reader([&] { std::shared_lock lock(mutex); });
  std::this_thread::sleep_for(100ms);
  mutex.unlock();
  reader.join();
  const auto waited = ReaderSlotsMutex::readers_held_up() - before;
  EXPECT_GE(waited, 90ms);  // the reader may have come a little after the writer
  EXPECT_LT(waited, 30s);

  // A reader that runs 50 ms of the writer's work while held up: that is not counted as waiting.
  const auto helping_before = ReaderSlotsMutex::readers_held_up();
  mutex.lock();
  SharedRanges ranges(1, 1, [](std::size_t, std::size_t) {
    const auto start = BusyTimer::now();
    while (BusyTimer::now() - start < 50ms) {
    }
  });
  mutex.offer(ranges);
  std::chrono::steady_clock::duration helper_wall{};
  std::thread helper([&] {
    const auto start = std::chrono::steady_clock::now();
    { std::shared_lock lock(mutex); }
    helper_wall = std::chrono::steady_clock::now() - start;
  });
  ranges.wait_done();  // the reader took the range and ran it
  mutex.withdraw();
  mutex.unlock();
  helper.join();
  // Its 50 ms of CPU running the range are left out of the time it waited, however long the
  // machine took to give it them.
  EXPECT_LE(ReaderSlotsMutex::readers_held_up() - helping_before, helper_wall - 50ms);
}

// How long a writer waited for the readers inside to leave is counted: about the 100 ms a
// reader held the lock after the writer came; nothing when no reader was inside.
TEST(ReaderSlotsMutex, TheTimeAWriterWaitsForReadersIsCounted) {
  ReaderSlotsMutex mutex;
  const auto before = ReaderSlotsMutex::writers_waited();
  mutex.lock();
  mutex.unlock();
  EXPECT_EQ(ReaderSlotsMutex::writers_waited(), before) << "no reader, no wait";

  std::atomic<bool> reading{false};
  std::thread reader([&] {
    std::shared_lock lock(mutex);
    reading = true;
    std::this_thread::sleep_for(150ms);
  });
  while (!reading) std::this_thread::yield();
  const auto start = std::chrono::steady_clock::now();
  mutex.lock();
  const auto locked_after = std::chrono::steady_clock::now() - start;
  mutex.unlock();
  reader.join();
  const auto waited = ReaderSlotsMutex::writers_waited() - before;
  EXPECT_GE(waited, 50ms);  // the reader holds the lock for 150 ms from before the writer came
  EXPECT_LE(waited, locked_after);
}

}  // namespace
}  // namespace rulestream
