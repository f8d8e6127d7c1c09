#include "core/memory/arena_vector.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "core/memory/record_arena.hpp"

namespace rulestream {
namespace {

struct Entry {
  std::int64_t step;
  std::uint32_t worker;
};

TEST(ArenaVectorTest, EmptyUntilThePushAndHoldsOnePointer) {
  ArenaVector<Entry> entries;
  EXPECT_TRUE(entries.empty());
  EXPECT_EQ(entries.size(), 0u);
  EXPECT_EQ(entries.begin(), entries.end());
  static_assert(sizeof(ArenaVector<Entry>) == sizeof(void*));
}

TEST(ArenaVectorTest, GrowingKeepsEveryElementInOrder) {
  RecordArena arena(2 << 20);
  ArenaVector<Entry> entries;
  for (std::uint32_t i = 0; i < 1000; ++i) {
    Entry& pushed = entries.push_back({std::int64_t{i} * 10, i}, arena);
    EXPECT_EQ(pushed.worker, i);
  }
  ASSERT_EQ(entries.size(), 1000u);
  std::uint32_t expected = 0;
  for (const Entry& entry : entries) {
    EXPECT_EQ(entry.step, std::int64_t{expected} * 10);
    EXPECT_EQ(entry.worker, expected);
    ++expected;
  }
  EXPECT_EQ(entries.front().worker, 0u);
  EXPECT_EQ(entries.back().worker, 999u);
}

TEST(ArenaVectorTest, ReservedRoomTakesNoNewBlock) {
  RecordArena arena(2 << 20);
  ArenaVector<std::uint64_t> values;
  values.reserve(4, arena);
  EXPECT_TRUE(values.empty());
  const std::uint64_t* first = &values.push_back(1, arena);
  for (std::uint64_t v = 2; v <= 4; ++v) values.push_back(v, arena);
  EXPECT_EQ(values.begin(), first);  // four fitted where the first went
  values.push_back(5, arena);        // the fifth moves them all
  EXPECT_NE(values.begin(), first);
  EXPECT_EQ(std::accumulate(values.begin(), values.end(), std::uint64_t{0}), 15u);
  // Reserving less than is held changes nothing.
  const std::uint64_t* moved = values.begin();
  values.reserve(2, arena);
  EXPECT_EQ(values.begin(), moved);
  EXPECT_EQ(values.size(), 5u);
}

TEST(ArenaVectorTest, ElementsAreWritableInPlaceAndCopiesShareThem) {
  RecordArena arena(2 << 20);
  ArenaVector<Entry> entries;
  entries.reserve(2, arena);
  entries.push_back({1, 1}, arena);
  entries.push_back({2, 2}, arena);
  const ArenaVector<Entry> view = entries;
  entries.front().step = 7;
  EXPECT_EQ(view.front().step, 7);  // a copy is a view of the same block
  EXPECT_EQ(view.size(), 2u);
}

TEST(ArenaVectorTest, ACopiedBlockLeavesEarlierCopiesAsTheyWere) {
  RecordArena arena(2 << 20);
  ArenaVector<Entry> entries;
  entries.reserve(4, arena);  // room to push in place
  entries.push_back({1, 1}, arena);
  const ArenaVector<Entry> held = entries;  // what a reader copied out earlier

  entries = entries.copied_to(arena);
  entries.front().step = 9;
  entries.push_back({2, 2}, arena);
  EXPECT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries.front().step, 9);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held.front().step, 1);

  EXPECT_TRUE(ArenaVector<Entry>().copied_to(arena).empty());
}

}  // namespace
}  // namespace rulestream
