#include "stages/load/record_batches.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>
#include <vector>

namespace rulestream {
namespace {

struct Planned {
  std::uint64_t start, end;
  std::size_t first, last;
  friend bool operator==(const Planned&, const Planned&) = default;
};

std::vector<Planned> plan(const std::vector<RecordSpan>& records, BatchLimits limits) {
  std::vector<Planned> planned;
  for (const RecordBatch& batch : plan_record_batches(records, limits)) {
    planned.push_back({batch.start, batch.end, batch.first, batch.last});
  }
  return planned;
}

TEST(RecordBatchesTest, AdjacentRecordsShareABatchUpToTheLimit) {
  const BatchLimits limits{.max_bytes = 1000, .max_gap = 0};
  // Five adjacent records of 300 bytes: three fit in 1000 bytes, then two more.
  std::vector<RecordSpan> records;
  for (std::uint64_t i = 0; i < 5; ++i) records.push_back({i * 300, 300});
  EXPECT_EQ(plan(records, limits), (std::vector<Planned>{{0, 900, 0, 3}, {900, 1500, 3, 5}}));
}

TEST(RecordBatchesTest, DistantRecordsAreReadApart) {
  const BatchLimits limits{.max_bytes = 10'000, .max_gap = 100};
  // A gap of 100 bytes is bridged (read along); one of 101 is not.
  const std::vector<RecordSpan> records{{0, 50}, {150, 50}, {301, 50}};
  EXPECT_EQ(plan(records, limits), (std::vector<Planned>{{0, 200, 0, 2}, {301, 351, 2, 3}}));
}

TEST(RecordBatchesTest, ARecordLongerThanTheLimitIsABatchOfItsOwn) {
  const BatchLimits limits{.max_bytes = 1000, .max_gap = 0};
  const std::vector<RecordSpan> records{{0, 10}, {10, 5000}, {5010, 10}, {5020, 10}};
  EXPECT_EQ(plan(records, limits),
            (std::vector<Planned>{{0, 10, 0, 1}, {10, 5010, 1, 2}, {5010, 5030, 2, 4}}));
}

TEST(RecordBatchesTest, OverlappingRecordsOfACorruptIndexAreEachReadWhole) {
  const BatchLimits limits{.max_bytes = 1000, .max_gap = 0};
  const std::vector<RecordSpan> records{{0, 400}, {100, 100}, {200, 700}, {850, 300}};
  // The third record reaches 900; the fourth would take the batch to 1150.
  EXPECT_EQ(plan(records, limits), (std::vector<Planned>{{0, 900, 0, 3}, {850, 1150, 3, 4}}));
}

TEST(RecordBatchesTest, EveryRecordLiesWithinItsBatch) {
  const BatchLimits limits{.max_bytes = 4096, .max_gap = 64};
  std::vector<RecordSpan> records;
  std::uint64_t offset = 0;
  for (std::uint64_t i = 0; i < 500; ++i) {
    const std::uint64_t length = 1 + (i * 7919) % 3000;
    records.push_back({offset, length});
    offset += length + (i % 5 == 0 ? 100 : 0);
  }
  const auto batches = plan_record_batches(records, limits);
  std::size_t next = 0;
  for (const RecordBatch& batch : batches) {
    ASSERT_EQ(batch.first, next);
    ASSERT_LT(batch.first, batch.last);
    EXPECT_TRUE(batch.end - batch.start <= limits.max_bytes || batch.last - batch.first == 1);
    for (std::size_t i = batch.first; i < batch.last; ++i) {
      EXPECT_GE(records[i].start, batch.start);
      EXPECT_LE(records[i].start + records[i].length, batch.end);
    }
    next = batch.last;
  }
  EXPECT_EQ(next, records.size());
}

TEST(RecordBatchesTest, NoRecordsNoBatches) {
  EXPECT_TRUE(plan_record_batches({}).empty());
}

TEST(RecordBatchesTest, UnsortedRecordsAreRefused) {
  const std::vector<RecordSpan> records{{100, 10}, {0, 10}};
  EXPECT_THROW(plan_record_batches(records), std::invalid_argument);
}

TEST(BatchBufferTest, AThreadReusesItsBufferForBatchesThatFit) {
  const std::byte* first = nullptr;
  {
    const BatchBuffer buffer(1000);
    EXPECT_TRUE(buffer.reused());
    EXPECT_EQ(buffer.span().size(), 1000u);
    first = buffer.span().data();
  }
  {
    const BatchBuffer smaller(10);
    EXPECT_TRUE(smaller.reused());
    EXPECT_EQ(smaller.span().data(), first);
    EXPECT_EQ(smaller.span().size(), 10u);
  }
  const BatchBuffer huge(BatchBuffer::kKeptBytes + 1);
  EXPECT_FALSE(huge.reused());
  EXPECT_EQ(huge.span().size(), BatchBuffer::kKeptBytes + 1);
}

TEST(BatchBufferTest, ABufferInUseIsNotHandedOutTwice) {
  const BatchBuffer outer(100);
  const BatchBuffer inner(100);
  EXPECT_TRUE(outer.reused());
  EXPECT_FALSE(inner.reused());
  EXPECT_NE(outer.span().data(), inner.span().data());
}

TEST(BatchBufferTest, ThreadsHaveBuffersOfTheirOwn) {
  const BatchBuffer here(100);
  const std::byte* there = nullptr;
  bool there_reused = false;
  std::thread([&] {
    const BatchBuffer buffer(100);
    there = buffer.span().data();
    there_reused = buffer.reused();
  }).join();
  EXPECT_TRUE(there_reused);
  EXPECT_NE(there, here.span().data());
}

}  // namespace
}  // namespace rulestream
