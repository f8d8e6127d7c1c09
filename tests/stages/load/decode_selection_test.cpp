#include "stages/load/decode_selection.hpp"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace rulestream {
namespace {

using Use = DecodeSelection::Use;
using Collections = std::map<std::string, Collection>;

std::vector<TensorLocation> tensors(const std::vector<std::string>& names) {
  std::vector<TensorLocation> located;
  for (const auto& name : names) located.push_back({.tensor_name = name});
  return located;
}

std::shared_ptr<const Collections> collections_with(const std::string& name,
                                                    std::vector<std::string> regexes,
                                                    std::set<std::string> names = {}) {
  Collection collection;
  collection.name = name;
  collection.include_regex = std::move(regexes);
  collection.tensor_names = std::move(names);
  return std::make_shared<const Collections>(Collections{{name, collection}});
}

TEST(DecodeSelectionTest, ARuleThatReadsReductionsOnlyGetsThemDecodedButNoValuesKept) {
  const DecodeSelection selection({RequiredTensors{.names = {"loss"}, .values = false}});
  EXPECT_EQ(selection.uses(tensors({"loss", "weight"}), nullptr, {true}),
            (std::vector<Use>{Use::Reductions, Use::None}));
}

TEST(DecodeSelectionTest, ValuesAreKeptOnlyWhileARuleStillReadsThem) {
  const DecodeSelection selection({RequiredTensors{.regexes = {"grad"}, .values = true}});
  EXPECT_EQ(selection.uses(tensors({"a/grad", "b/weight"}), nullptr, {true}),
            (std::vector<Use>{Use::Values, Use::None}));
  // The rule called done_reading_values(): its tensors are still reduced, no longer kept.
  EXPECT_EQ(selection.uses(tensors({"a/grad", "b/weight"}), nullptr, {false}),
            (std::vector<Use>{Use::Reductions, Use::None}));
}

TEST(DecodeSelectionTest, ARuleThatNamesNothingReadsEverythingButSavedReductions) {
  const DecodeSelection selection({RequiredTensors{.values = false}});
  // A saved reduction's record is read on demand, never eagerly.
  EXPECT_EQ(selection.uses(tensors({"x", "smdebug/reductions/l2/x"}), nullptr, {true}),
            (std::vector<Use>{Use::Reductions, Use::None}));
}

TEST(DecodeSelectionTest, ARuleThatReadsNoTensorsDecodesNothing) {
  const DecodeSelection selection({RequiredTensors{.nothing = true}});
  EXPECT_EQ(selection.uses(tensors({"loss", "w"}), nullptr, {true}),
            (std::vector<Use>{Use::None, Use::None}));
}

TEST(DecodeSelectionTest, CollectionsSelectByTheirNamesAndRegexesOnceKnown) {
  const DecodeSelection selection({RequiredTensors{.collections = {"losses"}, .values = false}});
  // Before the collections are known every tensor might belong: be generous.
  EXPECT_EQ(selection.uses(tensors({"total", "weight"}), nullptr, {true}),
            (std::vector<Use>{Use::Reductions, Use::Reductions}));
  const auto known = collections_with("losses", {"loss$"}, {"total"});
  EXPECT_EQ(selection.uses(tensors({"total", "ce_loss", "weight"}), known, {true}),
            (std::vector<Use>{Use::Reductions, Use::Reductions, Use::None}));
}

TEST(DecodeSelectionTest, TheStrongestUseOfAnyRuleWins) {
  const DecodeSelection selection({RequiredTensors{.names = {"w"}, .values = false},
                                   RequiredTensors{.names = {"w"}, .values = true}});
  EXPECT_EQ(selection.uses(tensors({"w"}), nullptr, {true, true}), std::vector<Use>{Use::Values});
  EXPECT_EQ(selection.uses(tensors({"w"}), nullptr, {true, false}),
            std::vector<Use>{Use::Reductions});
}

}  // namespace
}  // namespace rulestream
