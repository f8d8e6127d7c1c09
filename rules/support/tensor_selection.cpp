#include "rules/support/tensor_selection.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "core/model/exceptions.hpp"
#include "rules/rule_registry.hpp"

namespace rulestream {
namespace {

// A list parameter's default as a user would write it: comma-separated, "" for none.
std::string list_text(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

}  // namespace

ParameterSpec TensorSelection::collections_parameter(std::string description,
                                                     const TensorSelection& defaults) {
  return {"collection_names", "list", list_text(defaults.collections), std::move(description)};
}

ParameterSpec TensorSelection::regexes_parameter(std::string description,
                                                 const TensorSelection& defaults) {
  return {"tensor_regex", "regex list", list_text(defaults.regexes), std::move(description)};
}

TensorSelection TensorSelection::read(ParameterReader& reader, const TensorSelection& defaults) {
  TensorSelection selection;
  selection.collections = reader.list("collection_names", defaults.collections);
  selection.regexes = reader.regex_list("tensor_regex", defaults.regexes);
  return selection;
}

std::vector<std::string> TensorSelection::names(const Trial& trial,
                                                std::optional<std::int64_t> step) const {
  return names_of(tensor_refs(trial, step));
}

std::vector<TensorRef> TensorSelection::tensor_refs(const Trial& trial,
                                                    std::optional<std::int64_t> step) const {
  using Names = std::vector<TensorRef>;
  if (selects_all()) return trial.tensor_refs({.step = step});
  // Each list comes sorted and unique; the union of several is merged.
  std::vector<Names> lists;
  for (const std::string& collection : collections) {
    try {
      lists.push_back(trial.tensor_refs({.step = step, .collection = collection}));
    } catch (const CollectionUnavailable&) {
      // smdebug creates a missing collection on lookup: it simply holds no tensors.
    }
  }
  if (!regexes.empty()) lists.push_back(trial.tensor_refs({.step = step, .regex = regexes}));
  if (lists.empty()) return {};
  Names selected = std::move(lists.front());
  for (std::size_t i = 1; i < lists.size(); ++i) {
    Names merged;
    merged.reserve(selected.size() + lists[i].size());
    std::set_union(selected.begin(), selected.end(), lists[i].begin(), lists[i].end(),
                   std::back_inserter(merged),
                   [](const TensorRef& a, const TensorRef& b) { return a.name() < b.name(); });
    selected = std::move(merged);
  }
  return selected;
}

}  // namespace rulestream
