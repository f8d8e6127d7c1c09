// The per-step tensor lists Trial::tensor_refs shares between rules: when a list goes stale,
// which steps are kept, how steps with the same tensors share a layout, and how a name filter
// is worked out once per layout.
#include "trial/store/step_tensors_cache.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trial/store/name_filter_cache.hpp"

namespace rulestream {
namespace {

// Histories are only carried, never read, by the cache: fake addresses are enough.
const TensorHistory* history(std::uintptr_t n) {
  return reinterpret_cast<const TensorHistory*>(n * alignof(std::max_align_t));
}

StepLayout layout_of(const std::vector<const std::string*>& names) {
  StepLayout layout;
  for (std::size_t i = 0; i < names.size(); ++i) {
    layout.names.push_back(names[i]);
    layout.histories.push_back(history(i + 1));
  }
  return layout;
}

TEST(StepTensorsCache, AListServesUntilATensorFirstLandsAtItsStepAfterIt) {
  const std::string a = "a", b = "b";
  StepTensorsCache cache;
  EXPECT_EQ(cache.find(5, 0), nullptr);
  const auto list = cache.put(5, 3, layout_of({&a, &b}), {1, 3});
  ASSERT_NE(list, nullptr);
  EXPECT_EQ(list->visible_from, (std::vector<std::uint64_t>{1, 3}));
  EXPECT_EQ(cache.find(5, 3), list) << "built in the generation of the step's last change";
  EXPECT_EQ(cache.find(5, 2), list);
  EXPECT_EQ(cache.find(5, 4), nullptr) << "a tensor first landed at the step after the list";
  EXPECT_EQ(cache.find(6, 0), nullptr) << "another step";

  // Two threads that build the same step keep the newer list.
  const auto newer = cache.put(5, 7, layout_of({&a, &b}), {1, 3});
  EXPECT_EQ(cache.put(5, 6, layout_of({&a}), {1}), newer);
  EXPECT_EQ(cache.find(5, 7), newer);
}

TEST(StepTensorsCache, StepsWithTheSameTensorsShareOneLayout) {
  const std::string a = "a", b = "b", c = "c";
  StepTensorsCache cache;
  const auto first = cache.put(1, 1, layout_of({&a, &b}), {1, 1});
  const auto second = cache.put(2, 2, layout_of({&a, &b}), {2, 2});
  EXPECT_EQ(first->layout, second->layout);
  EXPECT_EQ(second->visible_from, (std::vector<std::uint64_t>{2, 2})) << "per step";
  const auto third = cache.put(3, 3, layout_of({&a, &b, &c}), {3, 3, 3});
  EXPECT_NE(third->layout, second->layout);
  EXPECT_EQ(third->layout->size(), 3u);
  EXPECT_EQ(*third->layout->names[2], "c");
  // The same names with other histories are another layout (another store's tensors).
  StepLayout other = layout_of({&a, &b, &c});
  other.histories[0] = history(99);
  EXPECT_NE(cache.put(4, 4, other, {4, 4, 4})->layout, third->layout);
}

TEST(StepTensorsCache, KeepsTheStepsUsedMostRecently) {
  const std::string a = "a";
  StepTensorsCache cache(2);
  cache.put(1, 1, layout_of({&a}), {1});
  cache.put(2, 2, layout_of({&a}), {2});
  ASSERT_NE(cache.find(1, 0), nullptr);  // step 1 is now the more recently used
  cache.put(3, 3, layout_of({&a}), {3});
  EXPECT_NE(cache.find(1, 0), nullptr);
  EXPECT_EQ(cache.find(2, 0), nullptr) << "the least recently used step goes";
  EXPECT_NE(cache.find(3, 0), nullptr);

  StepTensorsCache none(0);
  const auto list = none.put(1, 1, layout_of({&a}), {1});
  ASSERT_NE(list, nullptr) << "a cache that keeps nothing still hands the list back";
  EXPECT_EQ(none.find(1, 0), nullptr);
}

TEST(NameFilterCache, AFilterIsWorkedOutOncePerLayout) {
  const std::string loss = "loss", relu = "relu_output", weight = "weight", bias = "bias";
  StepTensorsCache steps;
  const auto step_1 = steps.put(1, 1, layout_of({&bias, &loss, &relu, &weight}), {1, 1, 1, 1});
  const auto step_2 = steps.put(2, 2, layout_of({&bias, &loss, &relu, &weight}), {2, 2, 2, 2});
  const auto step_3 = steps.put(3, 3, layout_of({&loss, &weight}), {3, 3});

  NameFilterCache filters;
  NameFilterCache::Verdicts& verdicts = filters.verdicts("w-or-u");
  std::vector<std::string> decided;
  const auto decide = [&](const std::string& name) {
    decided.push_back(name);
    return name.find('w') != std::string::npos || name.find('u') != std::string::npos;
  };
  auto lock = verdicts.lock();
  EXPECT_EQ(*verdicts.passing(step_1->layout, decide), (std::vector<std::uint32_t>{2, 3}));
  EXPECT_EQ(decided, (std::vector<std::string>{"bias", "loss", "relu_output", "weight"}));
  EXPECT_EQ(verdicts.passing(step_2->layout, decide), verdicts.passing(step_1->layout, decide))
      << "the same layout: the same answer, not worked out again";
  EXPECT_EQ(*verdicts.passing(step_3->layout, decide), (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(decided.size(), 4u) << "each name is decided once, whatever the layout";
}

}  // namespace
}  // namespace rulestream
