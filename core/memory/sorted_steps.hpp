#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace rulestream {

// Entries by global step, in step order: what a std::map<std::int64_t, T> gave the trial store,
// without a node allocation per entry. Steps mostly arrive in order, so adding one is an append;
// one that arrives late is inserted in place. References to entries last until the next insert.
// `Allocator` places the entries (a trial store keeps them in its RecordArena).
template <typename T, typename Allocator = std::allocator<std::pair<std::int64_t, T>>>
class SortedSteps {
 public:
  using Entry = std::pair<std::int64_t, T>;
  using const_iterator = typename std::vector<Entry, Allocator>::const_iterator;

  SortedSteps() = default;
  explicit SortedSteps(const Allocator& allocator) : entries_(allocator) {}

  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }
  void reserve(std::size_t steps) { entries_.reserve(steps); }

  // The first entry at or after `step` (end() when there is none).
  const_iterator lower_bound(std::int64_t step) const {
    if (entries_.empty() || last_ < step) return entries_.end();
    // The newest step is the one most asked for (rules evaluate the step that just landed).
    if (last_ == step) return entries_.end() - 1;
    if (step <= first_) return entries_.begin();
    // Jobs save at a fixed interval, so where the step would sit if the spacing were even is
    // nearly always where it is: rules ask for every tensor at every step, while loading runs
    // ahead of them. The ends are kept beside the array, so such a lookup reads one entry of it:
    // rules look up thousands of tensors' arrays at every step, and each entry read is a cache
    // miss. Here first_ < step < last_.
    // In double: the product could overflow any integer; a rounding miss only costs the search.
    const double fraction = (static_cast<double>(step) - static_cast<double>(first_)) /
                            (static_cast<double>(last_) - static_cast<double>(first_));
    const std::size_t guess =
        std::min(static_cast<std::size_t>(fraction * static_cast<double>(entries_.size() - 1)),
                 entries_.size() - 1);
    if (entries_[guess].first == step) return entries_.begin() + static_cast<std::ptrdiff_t>(guess);
    return std::lower_bound(entries_.begin(), entries_.end(), step, before);
  }

  const T* find(std::int64_t step) const {
    const auto it = lower_bound(step);
    return it != entries_.end() && it->first == step ? &it->second : nullptr;
  }

  // Where the latest entry is and the next appended one will go: a writer about to append
  // prefetches them.
  const void* tail() const { return entries_.data() + entries_.size(); }

  // The entry for `step`, default-constructed when new (second: whether it was).
  std::pair<T*, bool> try_emplace(std::int64_t step) {
    if (entries_.empty() || last_ < step) {
      if (entries_.empty()) first_ = step;
      last_ = step;
      entries_.emplace_back(step, T{});
      return {&entries_.back().second, true};
    }
    // The step's other workers land right after the first.
    if (last_ == step) return {&entries_.back().second, false};
    auto it = std::lower_bound(entries_.begin(), entries_.end(), step, before);
    if (it != entries_.end() && it->first == step) return {&it->second, false};
    first_ = std::min(first_, step);
    it = entries_.emplace(it, step, T{});
    return {&it->second, true};
  }

 private:
  static bool before(const Entry& entry, std::int64_t step) { return entry.first < step; }

  std::vector<Entry, Allocator> entries_;
  // The first and last entries' steps (while there are entries).
  std::int64_t first_ = 0;
  std::int64_t last_ = 0;
};

}  // namespace rulestream
