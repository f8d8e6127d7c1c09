// The trial's record cache: reductions kept for every record, values within a budget, records
// found by (file number, offset).

#include "trial/store/record_cache.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/model/growing_reservation.hpp"

namespace rulestream {
namespace {

TensorValue floats_in(const SharedBytes& bytes, std::int64_t count) {
  return TensorValue(DType::Float32, {count}, bytes.slice(0, static_cast<std::size_t>(count) * 4));
}

TEST(RecordCacheTest, NumbersFilesOncePerPath) {
  RecordCache cache(1 << 20);
  const FileId a = cache.file_id("events/000000000001/a.tfevents");
  const FileId b = cache.file_id("events/000000000001/b.tfevents");
  EXPECT_NE(a, b);
  EXPECT_EQ(cache.file_id("events/000000000001/a.tfevents"), a);
}

// Names are read back without a lock, from chunks of 4,096: numbers on both sides of a chunk's
// edge, and numbers never given, which are an error.
TEST(RecordCacheTest, GivesEachNumbersFileNameBack) {
  RecordCache cache(1 << 20);
  std::vector<FileId> ids;
  for (int i = 0; i < 9000; ++i) ids.push_back(cache.file_id("events/" + std::to_string(i)));
  for (int i : {0, 1, 4095, 4096, 4097, 8191, 8192, 8999}) {
    EXPECT_EQ(ids[static_cast<std::size_t>(i)], static_cast<FileId>(i));
    EXPECT_EQ(cache.file_name(ids[static_cast<std::size_t>(i)]), "events/" + std::to_string(i));
  }
  EXPECT_THROW(cache.file_name(9000), std::out_of_range);
  EXPECT_THROW(RecordCache(1).file_name(0), std::out_of_range);
}

TEST(RecordCacheTest, FindsRecordsByFileAndOffset) {
  RecordCache cache(1 << 20);
  const FileId file = cache.file_id("f");
  ReductionSet first;
  first.set({Reduction::Max, false}, Scalar::of_double(DType::Float64, 1.0));
  ReductionSet second;
  second.set({Reduction::Max, false}, Scalar::of_double(DType::Float64, 2.0));
  cache.put_reductions({file, 0}, first);
  cache.put_reductions({file, 64}, second);
  EXPECT_FALSE(cache.reductions({file + 1, 0}).has_value());
  EXPECT_FALSE(cache.reductions({file, 32}).has_value());
  EXPECT_EQ(cache.reductions({file, 0})->get({Reduction::Max, false})->as_double(), 1.0);
  EXPECT_EQ(cache.reductions({file, 64})->get({Reduction::Max, false})->as_double(), 2.0);
}

TEST(RecordCacheTest, ASmallCachedValueDoesNotKeepItsFileBufferAlive) {
  RecordCache cache(1 << 20);
  std::weak_ptr<const void> file_buffer;
  {
    auto owner = std::make_shared<std::vector<std::byte>>(8 << 20);  // an 8 MiB event file
    const float loss = 0.25f;
    std::memcpy(owner->data(), &loss, sizeof loss);
    file_buffer = owner;
    const SharedBytes file(owner, std::span<const std::byte>(*owner));
    cache.put_value({0, 0}, floats_in(file, 1));
  }
  EXPECT_TRUE(file_buffer.expired()) << "the cached loss still holds the whole file";
  const auto cached = cache.value({0, 0});
  ASSERT_TRUE(cached.has_value());
  EXPECT_EQ(cached->as_double(0), 0.25);
  EXPECT_EQ(cache.value_bytes(), 4u);
}

// Storage keeps the mapping (local event files): decoding the value again is a slice of it, so
// the cache holds neither a copy nor the mapping.
TEST(RecordCacheTest, AValueInAKeptFileMappingIsNotHeld) {
  RecordCache cache(64 << 20);
  auto owner = std::make_shared<std::vector<std::byte>>(1 << 20);
  const SharedBytes mapping =
      SharedBytes::of_kept_mapping(owner, std::span<const std::byte>(*owner));
  EXPECT_TRUE(mapping.slice(64, 4096).in_kept_mapping());
  cache.put_value({0, 64}, floats_in(mapping.slice(64, 4096), 1024));
  EXPECT_FALSE(cache.value({0, 64}).has_value());
  EXPECT_EQ(cache.value_bytes(), 0u);
  EXPECT_EQ(owner.use_count(), 2);  // here and in `mapping`: none in the cache
  // The same bytes from a buffer that storage does not keep are held.
  const SharedBytes buffer(owner, std::span<const std::byte>(*owner));
  EXPECT_FALSE(buffer.in_kept_mapping());
  cache.put_value({0, 64}, floats_in(buffer.slice(64, 4096), 1024));
  EXPECT_TRUE(cache.value({0, 64}).has_value());
}

TEST(RecordCacheTest, ALargeValueThatIsASmallPartOfItsFileIsCopiedToo) {
  RecordCache cache(64 << 20);
  std::weak_ptr<const void> file_buffer;
  {
    auto owner = std::make_shared<std::vector<std::byte>>(13 << 20);  // 50 tensors of 256 KiB
    file_buffer = owner;
    const SharedBytes file(owner, std::span<const std::byte>(*owner));
    cache.put_value({0, 0}, floats_in(file, 65536));
  }
  EXPECT_TRUE(file_buffer.expired());
  EXPECT_EQ(cache.value_bytes(), 65536u * 4);
}

TEST(RecordCacheTest, AValueThatIsMostOfItsBufferStaysZeroCopy) {
  RecordCache cache(64 << 20);
  auto owner = std::make_shared<std::vector<std::byte>>(300 << 10);
  const SharedBytes file(owner, std::span<const std::byte>(*owner));
  cache.put_value({0, 0}, floats_in(file, 65536));  // 256 KiB of 300 KiB
  const auto cached = cache.value({0, 0});
  ASSERT_TRUE(cached.has_value());
  EXPECT_EQ(cached->bytes().data(), owner->data());
}

TEST(RecordCacheTest, EvictsTheLeastRecentlyUsedValuesBeyondTheBudget) {
  // 16 stripes share the budget: 16 x 4 KiB here, so each stripe holds one 4 KiB value.
  RecordCache cache(16 * 4096);
  std::vector<std::byte> bytes(4096);
  for (std::uint64_t i = 0; i < 64; ++i) {
    cache.put_value({0, i * 4096}, floats_in(SharedBytes::copy_of(bytes), 1024));
  }
  EXPECT_LE(cache.value_bytes(), cache.value_budget());
  int kept = 0;
  for (std::uint64_t i = 0; i < 64; ++i) kept += cache.value({0, i * 4096}).has_value() ? 1 : 0;
  EXPECT_GT(kept, 0);
  EXPECT_LT(kept, 64);
}

// An empty cache answers without looking (it counts what it holds); once it holds a value, that
// value is found, and a value it refused leaves the count alone.
TEST(RecordCacheTest, AnEmptyCacheAnswersAtOnceAndFindsWhatItThenHolds) {
  RecordCache cache(16 * 4096);
  std::vector<std::byte> bytes(4096);
  EXPECT_FALSE(cache.value({0, 0}).has_value());
  cache.put_value({0, 0}, floats_in(SharedBytes::copy_of(bytes), 1024));
  EXPECT_TRUE(cache.value({0, 0}).has_value());
  // Values too large for a stripe are never held; nothing else changes.
  std::vector<std::byte> large(8192);
  cache.put_value({0, 8192}, floats_in(SharedBytes::copy_of(large), 2048));
  EXPECT_FALSE(cache.value({0, 8192}).has_value());
  EXPECT_TRUE(cache.value({0, 0}).has_value());
}

// Values share the job's budget with other holders: they take their bytes from it, give them
// back when they leave, and work short of bytes (an inflation) has the oldest leave.
TEST(RecordCacheTest, ValuesTakeTheirBytesFromTheSharedBudgetAndLeaveForWork) {
  auto budget = std::make_shared<MemoryBudget>(64 << 10);
  RecordCache cache(/*value_cap_bytes=*/1 << 20, budget);  // a cap far above the budget
  std::vector<std::byte> bytes(4096);
  for (std::uint64_t i = 0; i < 8; ++i) {
    cache.put_value({0, i * 4096}, floats_in(SharedBytes::copy_of(bytes), 1024));
  }
  EXPECT_EQ(cache.value_bytes(), 8u * 4096);
  EXPECT_EQ(budget->reserved(), 8u * 4096);
  GrowingReservation work(*budget);
  ASSERT_EQ(work.grow(60 << 10), GrowingReservation::Grant::Granted);
  EXPECT_EQ(cache.value_bytes(), 4096u);  // seven values left, one fits beside the work
  EXPECT_EQ(budget->reserved(), (60u << 10) + 4096);
  // While the work holds the budget, a new value has only this cache's own to take from.
  cache.put_value({1, 0}, floats_in(SharedBytes::copy_of(bytes), 1024));
  EXPECT_TRUE(cache.value({1, 0}).has_value());
  EXPECT_EQ(cache.value_bytes(), 4096u);
  EXPECT_LE(budget->peak_reserved(), budget->limit());
}

// What other holders keep is theirs: a value the budget has no room for is not kept (it is read
// again when asked for), and nothing else is lost.
TEST(RecordCacheTest, AValueTheSharedBudgetHasNoRoomForIsNotKept) {
  auto budget = std::make_shared<MemoryBudget>(64 << 10);
  RecordCache cache(1 << 20, budget);
  GrowingReservation work(*budget);
  ASSERT_EQ(work.grow(62 << 10), GrowingReservation::Grant::Granted);
  std::vector<std::byte> bytes(4096);
  cache.put_value({0, 0}, floats_in(SharedBytes::copy_of(bytes), 1024));
  EXPECT_FALSE(cache.value({0, 0}).has_value());
  EXPECT_EQ(budget->reserved(), 62u << 10);
  cache.put_value({0, 4096}, floats_in(SharedBytes::copy_of(bytes), 256));  // 1 KiB fits
  EXPECT_TRUE(cache.value({0, 4096}).has_value());
}

TEST(RecordCacheTest, GivesItsValuesBytesBackWhenItGoes) {
  auto budget = std::make_shared<MemoryBudget>(64 << 10);
  {
    RecordCache cache(1 << 20, budget);
    std::vector<std::byte> bytes(4096);
    cache.put_value({0, 0}, floats_in(SharedBytes::copy_of(bytes), 1024));
    EXPECT_EQ(budget->reserved(), 4096u);
  }
  EXPECT_EQ(budget->reserved(), 0u);
}

}  // namespace
}  // namespace rulestream
