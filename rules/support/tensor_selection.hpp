#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/model/exceptions.hpp"
#include "rules/rule.hpp"
#include "trial/api/tensor.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {

class ParameterReader;
struct ParameterSpec;

// The tensors a rule inspects, from smdebug's `collection_names` and `tensor_regex` parameters:
// the union of both, and every tensor when neither is given (seed 002).
struct TensorSelection {
  std::vector<std::string> collections;
  std::vector<std::string>
      regexes;  // Python re syntax, searched (not anchored), as Trial takes them

  // The two parameters as a RuleSpec lists them, with the defaults of `defaults`. The default
  // descriptions fit a rule that inspects the tensors; a rule that does something else with
  // them (compares them, follows losses) words its own.
  static ParameterSpec collections_parameter(
      std::string description = "collections whose tensors are inspected",
      const TensorSelection& defaults = {});
  static ParameterSpec regexes_parameter(
      std::string description = "regexes of tensor names to inspect (with collections: union)",
      const TensorSelection& defaults = {});
  // Reads collection_names (a list) then tensor_regex (a list of regexes, each checked to
  // compile), each falling back to `defaults`'.
  static TensorSelection read(ParameterReader& reader, const TensorSelection& defaults = {});

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

// A tensor's element counts at a global step (Tensor::element_counts), or nullopt when it has
// no elements to count there: saved only as reductions at this step, or not numbers (strings,
// complex values). Rules that walk a selection at a step skip such tensors.
inline std::optional<ElementCounts> saved_element_counts(const Tensor& tensor, std::int64_t step) {
  try {
    return tensor.element_counts(step);
  } catch (const TensorUnavailableForStep&) {
    return std::nullopt;
  }
}

}  // namespace rulestream
