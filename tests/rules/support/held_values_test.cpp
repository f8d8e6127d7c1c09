// HeldValues: what a rule keeps of one step's values for the next.
#include "rules/support/held_values.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace rulestream {
namespace {

// `count` float32 elements, copied (not in a kept mapping).
TensorValue copied_floats(std::size_t count, float fill) {
  return TensorValue::from_values(DType::Float32, {static_cast<std::int64_t>(count)},
                                  std::vector<float>(count, fill));
}

// `count` float32 elements as a slice of a kept file mapping would give them.
TensorValue mapped_floats(std::size_t count) {
  auto owner = std::make_shared<std::vector<float>>(count, 1.0f);
  const auto bytes = std::as_bytes(std::span<const float>(*owner));
  return TensorValue(DType::Float32, {static_cast<std::int64_t>(count)},
                     SharedBytes::of_kept_mapping(owner, bytes));
}

TEST(HeldValues, GivesBackTheValueHeldAtTheStepAskedForOnce) {
  const std::string weight = "fc.weight";
  const std::string bias = "fc.bias";
  HeldValues held(1 << 20);
  held.hold(held.slot(&weight), 4, copied_floats(3, 2.5f));
  held.hold(held.slot(&bias), 4, copied_floats(1, -1.0f));

  EXPECT_FALSE(held.take(held.slot(&weight), 3).has_value()) << "held from step 4, not 3";
  const std::string same_name_other_string = "fc.weight";
  EXPECT_FALSE(held.take(held.slot(&same_name_other_string), 4).has_value())
      << "keyed by the trial's copy";

  const auto value = held.take(held.slot(&weight), 4);
  ASSERT_TRUE(value.has_value());
  EXPECT_EQ(value->size(), 3);
  EXPECT_EQ(value->as_double(2), 2.5);
  EXPECT_FALSE(held.take(held.slot(&weight), 4).has_value()) << "handed over, no longer held";
  EXPECT_EQ(held.size(), 1u);
  EXPECT_EQ(held.copied_bytes(), sizeof(float));
}

TEST(HeldValues, ANewerValueReplacesTheOneHeld) {
  const std::string weight = "fc.weight";
  HeldValues held(1 << 20);
  held.hold(held.slot(&weight), 1, copied_floats(100, 1.0f));
  held.hold(held.slot(&weight), 2, copied_floats(10, 2.0f));
  EXPECT_EQ(held.size(), 1u);
  EXPECT_EQ(held.copied_bytes(), 10 * sizeof(float));
  EXPECT_FALSE(held.take(held.slot(&weight), 1).has_value());
  const auto value = held.take(held.slot(&weight), 2);
  ASSERT_TRUE(value.has_value());
  EXPECT_EQ(value->as_double(0), 2.0);
  EXPECT_EQ(held.copied_bytes(), 0u);
}

TEST(HeldValues, CopiesAreHeldWithinTheBudgetAndMappedSlicesCostNothing) {
  std::vector<std::string> names = {"a", "b", "c", "d"};
  HeldValues held(2 * 100 * sizeof(float));
  held.hold(held.slot(&names[0]), 7, copied_floats(100, 1.0f));
  held.hold(held.slot(&names[1]), 7, copied_floats(100, 1.0f));
  held.hold(held.slot(&names[2]), 7, copied_floats(100, 1.0f));  // over the budget: not held
  held.hold(held.slot(&names[3]), 7, mapped_floats(1'000'000));  // a slice of a kept mapping: free
  EXPECT_EQ(held.copied_bytes(), 2 * 100 * sizeof(float));
  EXPECT_TRUE(held.take(held.slot(&names[0]), 7).has_value());
  EXPECT_TRUE(held.take(held.slot(&names[1]), 7).has_value());
  EXPECT_FALSE(held.take(held.slot(&names[2]), 7).has_value()) << "the rule reads it again";
  const auto mapped = held.take(held.slot(&names[3]), 7);
  ASSERT_TRUE(mapped.has_value());
  EXPECT_TRUE(mapped->bytes().in_kept_mapping());
  EXPECT_EQ(held.copied_bytes(), 0u);

  // A value too big for the budget drops what was held for its tensor, rather than leave an
  // older step's value behind.
  held.hold(held.slot(&names[0]), 8, copied_floats(10, 1.0f));
  held.hold(held.slot(&names[0]), 9, copied_floats(1000, 1.0f));
  EXPECT_FALSE(held.take(held.slot(&names[0]), 8).has_value());
  EXPECT_FALSE(held.take(held.slot(&names[0]), 9).has_value());
  EXPECT_EQ(held.size(), 0u);
}

// A rule moves its weights on in parallel ranges, each slot on one thread: copies held from
// many threads at once never exceed the budget together, and every one that fits is held.
TEST(HeldValues, SlotsHeldFromManyThreadsAtOnceShareOneBudget) {
  constexpr std::size_t kThreads = 8;
  constexpr std::size_t kSlotsEach = 200;
  constexpr std::size_t kFit = 150;  // copies of 100 floats the budget holds
  std::vector<std::string> names(kThreads * kSlotsEach);
  for (std::size_t i = 0; i < names.size(); ++i) names[i] = "w" + std::to_string(i);
  HeldValues held(kFit * 100 * sizeof(float));
  std::vector<HeldValues::Slot*> slots;
  for (const std::string& name : names) slots.push_back(&held.slot(&name));
  {
    std::vector<std::jthread> threads;
    for (std::size_t t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (std::size_t i = t * kSlotsEach; i < (t + 1) * kSlotsEach; ++i) {
          held.hold(*slots[i], 3, copied_floats(100, static_cast<float>(i)));
        }
      });
    }
  }
  EXPECT_EQ(held.size(), kFit);
  EXPECT_EQ(held.copied_bytes(), kFit * 100 * sizeof(float));
  std::size_t taken = 0;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (const auto value = held.take(*slots[i], 3)) {
      EXPECT_EQ(value->as_double(0), static_cast<double>(i)) << "slot " << i;
      ++taken;
    }
  }
  EXPECT_EQ(taken, kFit);
  EXPECT_EQ(held.size(), 0u);
  EXPECT_EQ(held.copied_bytes(), 0u);
}

}  // namespace
}  // namespace rulestream
