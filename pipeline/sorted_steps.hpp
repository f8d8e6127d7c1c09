#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace rulestream {

// Entries by global step, in step order: what a std::map<std::int64_t, T> gave the trial store,
// without a node allocation per entry. Steps mostly arrive in order, so adding one is an append;
// one that arrives late is inserted in place. References to entries last until the next insert.
template <typename T>
class SortedSteps {
 public:
  using Entry = std::pair<std::int64_t, T>;
  using const_iterator = typename std::vector<Entry>::const_iterator;

  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }

  const T* find(std::int64_t step) const {
    const auto it = lower_bound(step);
    return it != entries_.end() && it->first == step ? &it->second : nullptr;
  }

  // The entry for `step`, default-constructed when new (second: whether it was).
  std::pair<T*, bool> try_emplace(std::int64_t step) {
    if (entries_.empty() || entries_.back().first < step) {
      entries_.emplace_back(step, T{});
      return {&entries_.back().second, true};
    }
    auto it = std::lower_bound(entries_.begin(), entries_.end(), step, before);
    if (it != entries_.end() && it->first == step) return {&it->second, false};
    it = entries_.emplace(it, step, T{});
    return {&it->second, true};
  }

 private:
  static bool before(const Entry& entry, std::int64_t step) { return entry.first < step; }

  const_iterator lower_bound(std::int64_t step) const {
    // The newest step is the one most asked for (rules evaluate the step that just landed).
    if (!entries_.empty() && entries_.back().first == step) return entries_.end() - 1;
    return std::lower_bound(entries_.begin(), entries_.end(), step, before);
  }

  std::vector<Entry> entries_;
};

}  // namespace rulestream
