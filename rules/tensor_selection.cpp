#include "rules/tensor_selection.hpp"

#include <set>

#include "pipeline/exceptions.hpp"

namespace rulestream {

std::vector<std::string> TensorSelection::names(const Trial& trial,
                                                std::optional<std::int64_t> step) const {
  if (selects_all()) return trial.tensor_names({.step = step});
  std::set<std::string> selected;
  for (const std::string& collection : collections) {
    try {
      for (auto& name : trial.tensor_names({.step = step, .collection = collection})) {
        selected.insert(std::move(name));
      }
    } catch (const CollectionUnavailable&) {
      // smdebug creates a missing collection on lookup: it simply holds no tensors.
    }
  }
  if (!regexes.empty()) {
    for (auto& name : trial.tensor_names({.step = step, .regex = regexes})) {
      selected.insert(std::move(name));
    }
  }
  return {selected.begin(), selected.end()};
}

}  // namespace rulestream
