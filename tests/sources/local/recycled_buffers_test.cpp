#include "sources/local/recycled_buffers.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

namespace rulestream {
namespace {

TEST(RecycledBuffersTest, ABufferLetGoOfIsHandedOutAgain) {
  RecycledBuffers buffers(2, 1 << 20);
  const std::byte* first = nullptr;
  {
    const auto taken = buffers.take(1000);
    ASSERT_GE(taken->capacity, 1000u);
    first = taken->bytes.get();
  }
  const auto again = buffers.take(500);
  EXPECT_EQ(again->bytes.get(), first);
  EXPECT_EQ(buffers.kept(), 1u);
}

TEST(RecycledBuffersTest, AHeldBufferIsNeverHandedOut) {
  RecycledBuffers buffers(2, 1 << 20);
  const auto a = buffers.take(100);
  const std::shared_ptr<const void> slice_owner = a;  // what a SharedBytes slice holds
  const auto b = buffers.take(100);
  EXPECT_NE(a.get(), b.get());
  // Both kept buffers held: the next is a buffer of its own, not kept.
  const auto c = buffers.take(100);
  EXPECT_NE(c.get(), a.get());
  EXPECT_NE(c.get(), b.get());
  EXPECT_EQ(buffers.kept(), 2u);
}

TEST(RecycledBuffersTest, AReusedBufferGrowsToTheRequest) {
  RecycledBuffers buffers(1, 1 << 20);
  buffers.take(100);
  const auto grown = buffers.take(4096);
  EXPECT_GE(grown->capacity, 4096u);
  EXPECT_EQ(buffers.kept(), 1u);
}

TEST(RecycledBuffersTest, ALargeRequestGetsABufferOfItsOwn) {
  RecycledBuffers buffers(4, 1 << 10);
  const auto large = buffers.take(1 << 11);
  EXPECT_GE(large->capacity, std::size_t{1} << 11);
  EXPECT_EQ(buffers.kept(), 0u) << "not kept: it would hold its memory for good";
}

TEST(RecycledBuffersTest, ThreadsNeverShareABuffer) {
  RecycledBuffers buffers(4, 1 << 20);
  std::vector<std::thread> threads;
  std::vector<int> clashes(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const auto buffer = buffers.take(64);
        // Each thread writes its mark and reads it back: a buffer handed to two at once shows.
        for (int k = 0; k < 64; ++k) buffer->bytes[k] = static_cast<std::byte>(t);
        for (int k = 0; k < 64; ++k) {
          if (buffer->bytes[k] != static_cast<std::byte>(t)) ++clashes[t];
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(clashes[t], 0) << "thread " << t;
  EXPECT_LE(buffers.kept(), 4u);
}

}  // namespace
}  // namespace rulestream
