#include "rules/tensor_selection.hpp"

#include <algorithm>
#include <iterator>

#include "pipeline/exceptions.hpp"

namespace rulestream {

std::vector<std::string> TensorSelection::names(const Trial& trial,
                                                std::optional<std::int64_t> step) const {
  if (selects_all()) return trial.tensor_names({.step = step});
  // Each list comes sorted and unique; the union of several is merged.
  std::vector<std::vector<std::string>> lists;
  for (const std::string& collection : collections) {
    try {
      lists.push_back(trial.tensor_names({.step = step, .collection = collection}));
    } catch (const CollectionUnavailable&) {
      // smdebug creates a missing collection on lookup: it simply holds no tensors.
    }
  }
  if (!regexes.empty()) lists.push_back(trial.tensor_names({.step = step, .regex = regexes}));
  if (lists.empty()) return {};
  std::vector<std::string> selected = std::move(lists.front());
  for (std::size_t i = 1; i < lists.size(); ++i) {
    std::vector<std::string> merged;
    merged.reserve(selected.size() + lists[i].size());
    std::set_union(std::make_move_iterator(selected.begin()),
                   std::make_move_iterator(selected.end()),
                   std::make_move_iterator(lists[i].begin()),
                   std::make_move_iterator(lists[i].end()), std::back_inserter(merged));
    selected = std::move(merged);
  }
  return selected;
}

}  // namespace rulestream
