#include "pipeline/memory/reader_slots_mutex.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <shared_mutex>
#include <thread>
#include <vector>

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
  for (int r = 0; r < 4; ++r) {
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
  // would keep them out: it yields between writes, as the store's writer does between files.
  std::int64_t writes = 0;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while ((writes < 20000 || reads < 20000) && std::chrono::steady_clock::now() < deadline) {
    {
      std::unique_lock lock(mutex);
      ++first;
      ++second;
    }
    ++writes;
    std::this_thread::yield();
  }
  done = true;
  for (auto& reader : readers) reader.join();
  EXPECT_EQ(torn, 0);
  EXPECT_GE(reads, 20000);
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

}  // namespace
}  // namespace rulestream
