#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/trial/trial.hpp"
#include "rules/rule.hpp"

namespace rulestream {

// The tensors a rule inspects, from smdebug's `collection_names` and `tensor_regex` parameters:
// the union of both, and every tensor when neither is given (seed 002).
struct TensorSelection {
  std::vector<std::string> collections;
  std::vector<std::string> regexes;  // ECMAScript, searched (not anchored), as Trial takes them

  bool selects_all() const { return collections.empty() && regexes.empty(); }

  // Sorted names of the selected tensors; with `step`, only those saved at that global step.
  // A collection the job never declared selects nothing (smdebug hands back an empty one).
  std::vector<std::string> names(const Trial& trial,
                                 std::optional<std::int64_t> step = std::nullopt) const;
  // The same tensors as refs (Trial::tensor_refs): no names copied, and trial.tensor(ref) makes
  // a Tensor without a lookup. For a rule's walk over every tensor at every step.
  std::vector<TensorRef> tensor_refs(const Trial& trial,
                                     std::optional<std::int64_t> step = std::nullopt) const;

  // What a rule over this selection reads; `reads_values` as RequiredTensors::values.
  RequiredTensors required(bool reads_values = true) const {
    return {.regexes = regexes, .collections = collections, .values = reads_values};
  }
};

}  // namespace rulestream
