#include "core/memory/sorted_steps.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/memory/record_arena.hpp"

namespace rulestream {
namespace {

// Adds `steps` in the order given to `sorted` and checks every lookup, present or not, against
// a std::map.
template <typename Sorted>
void check_against_map(Sorted sorted, const std::vector<std::int64_t>& steps,
                       const std::string& what, std::size_t reserved) {
  sorted.reserve(reserved);  // a hint: more or fewer steps than it may come
  std::map<std::int64_t, std::int64_t> expected;
  for (const std::int64_t step : steps) {
    const auto [entry, added] = sorted.try_emplace(step);
    const auto [it, expected_added] = expected.try_emplace(step, 0);
    ASSERT_EQ(added, expected_added) << what << " step " << step;
    ++*entry;
    ++it->second;
  }
  ASSERT_EQ(sorted.size(), expected.size()) << what;
  ASSERT_TRUE(std::equal(
      sorted.begin(), sorted.end(), expected.begin(), expected.end(),
      [](const auto& a, const auto& b) { return a.first == b.first && a.second == b.second; }))
      << what;
  std::vector<std::int64_t> probes;
  for (const auto& [step, count] : expected) {
    probes.push_back(step);
    if (step > std::numeric_limits<std::int64_t>::min()) probes.push_back(step - 1);
    if (step < std::numeric_limits<std::int64_t>::max()) probes.push_back(step + 1);
  }
  for (const std::int64_t probe : probes) {
    const std::int64_t* found = sorted.find(probe);
    const auto it = expected.find(probe);
    if (it == expected.end()) {
      EXPECT_EQ(found, nullptr) << what << " probe " << probe;
    } else {
      ASSERT_NE(found, nullptr) << what << " probe " << probe;
      EXPECT_EQ(*found, it->second) << what << " probe " << probe;
    }
    // The first entry at or after the probe, present or not.
    const auto at_or_after = sorted.lower_bound(probe);
    const auto expected_at_or_after = expected.lower_bound(probe);
    if (expected_at_or_after == expected.end()) {
      EXPECT_TRUE(at_or_after == sorted.end()) << what << " lower_bound " << probe;
    } else {
      ASSERT_TRUE(at_or_after != sorted.end()) << what << " lower_bound " << probe;
      EXPECT_EQ(at_or_after->first, expected_at_or_after->first)
          << what << " lower_bound " << probe;
    }
  }
}

void check_against_map(const std::vector<std::int64_t>& steps, const std::string& what,
                       std::size_t reserved = 0) {
  check_against_map(SortedSteps<std::int64_t>(), steps, what, reserved);
}

TEST(SortedStepsTest, EvenlySpacedStepsInOrderWithWorkersRepeatingEachStep) {
  std::vector<std::int64_t> steps;
  for (std::int64_t step = 0; step < 5000; step += 10) {
    steps.push_back(step);
    steps.push_back(step);  // a second worker's index file for the same step
  }
  check_against_map(steps, "every 10 steps, two workers");
  check_against_map(steps, "sized for all of them", 500);
  check_against_map(steps, "sized for a tenth", 50);
}

TEST(SortedStepsTest, IrregularLateAndExtremeStepsAreFound) {
  std::mt19937_64 random(42);
  std::vector<std::int64_t> irregular;
  std::int64_t step = 0;
  for (int i = 0; i < 2000; ++i) irregular.push_back(step += 1 + random() % 50);
  std::vector<std::int64_t> shuffled = irregular;
  std::shuffle(shuffled.begin(), shuffled.end(), random);
  check_against_map(irregular, "irregular, in order");
  check_against_map(shuffled, "irregular, any order");

  // Spacing that changes half way (a job that saves more often late), and steps at the ends of
  // the range, where a position estimate from the spacing could overflow or land out of bounds.
  std::vector<std::int64_t> changing;
  for (std::int64_t s = 0; s < 1000; s += 100) changing.push_back(s);
  for (std::int64_t s = 1000; s < 1100; ++s) changing.push_back(s);
  check_against_map(changing, "spacing that changes");
  check_against_map({std::numeric_limits<std::int64_t>::min(), -5, 0, 7,
                     std::numeric_limits<std::int64_t>::max()},
                    "extremes");
  check_against_map({3}, "one step");
  check_against_map({}, "no steps");
}

// A trial store keeps the entries in its RecordArena, which never gives memory back: growing
// and inserting late steps must still move the entries along.
TEST(SortedStepsTest, EntriesInAnArenaGrowAndTakeLateSteps) {
  using Entry = std::pair<std::int64_t, std::int64_t>;
  RecordArena arena(std::size_t{1} << 20);
  std::mt19937_64 random(7);
  std::vector<std::int64_t> steps;
  for (std::int64_t step = 0; step < 3000; step += 3) steps.push_back(step);
  std::shuffle(steps.begin() + 500, steps.end(), random);  // in order, then late and early
  for (const std::size_t reserved : {std::size_t{0}, std::size_t{100}, std::size_t{1000}}) {
    check_against_map(
        SortedSteps<std::int64_t, ArenaAllocator<Entry>>(ArenaAllocator<Entry>(&arena)), steps,
        "in an arena, sized for " + std::to_string(reserved), reserved);
  }
  EXPECT_GT(arena.mapped_bytes(), 0u);  // the entries were the arena's
}

}  // namespace
}  // namespace rulestream
