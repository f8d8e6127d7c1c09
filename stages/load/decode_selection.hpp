#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/model/collection.hpp"
#include "core/model/name_regex.hpp"
#include "core/model/required_tensors.hpp"
#include "stages/format/index_file.hpp"

namespace rulestream {

// Tensors that some of the rules read: by name, regex or collection, or all of them.
class TensorMatcher {
 public:
  void add(const RequiredTensors& needs);

  // Not thread-safe (DecodeSelection calls it under its lock): the regexes of the collections
  // are compiled once per collections object, not once per name.
  bool matches(const std::string& tensor,
               const std::map<std::string, Collection>* collections) const;

 private:
  // The named collections this matcher selects, as defined in `collections` (which stay alive:
  // the trial store keeps every collections object it published).
  void bind(const std::map<std::string, Collection>* collections) const;

  bool all_ = false;
  std::set<std::string> names_;
  std::vector<NameRegex> regexes_;
  std::set<std::string> collections_;
  mutable const std::map<std::string, Collection>* bound_collections_ = nullptr;
  mutable std::vector<const std::set<std::string>*> bound_names_;
  mutable std::vector<NameRegex> bound_regexes_;
};

// What to do with a tensor as soon as it lands: decode and reduce it when some rule reads it,
// and keep its value too (within max_memory) when such a rule reads whole values; the other
// rules need nothing but its reductions and element counts, which are kept for every step.
class DecodeSelection {
 public:
  // What each rule reads (Rule::required_tensors), one entry per rule, in the order uses() is
  // told which of them still read whole values.
  explicit DecodeSelection(std::vector<RequiredTensors> required);

  enum class Use { None, Reductions, Values };

  // The use of each of `tensors`, given which rules still read whole values (`reading[i]`:
  // rule i's Rule::reads_values, which a rule may turn off part-way). A tensor's use is worked
  // out once per collections object and `reading` (matching regexes is slow, and the same names
  // land at every step). Thread-safe.
  std::vector<Use> uses(const std::vector<TensorLocation>& tensors,
                        const std::shared_ptr<const std::map<std::string, Collection>>& collections,
                        const std::vector<bool>& reading) const;

 private:
  Use decide(const std::string& tensor, const std::map<std::string, Collection>* collections) const;

  std::vector<RequiredTensors> required_;
  TensorMatcher decode_;
  mutable std::mutex memo_mutex_;
  // Worked out again when the collections or the rules reading values change.
  mutable std::shared_ptr<const std::map<std::string, Collection>> memo_collections_;
  mutable std::vector<bool> memo_reading_;
  mutable TensorMatcher values_;
  mutable std::unordered_map<std::string, Use> memo_;
};

}  // namespace rulestream
