#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace rulestream {

struct TensorHistory;

// The tensors saved at a step, in name order: the store's own names and histories (they last as
// long as the store). Steps of a job mostly save the same tensors, so consecutive steps with the
// same tensors share one layout, and what is worked out per layout (which names pass a rule's
// filter) is worked out once for all of them.
struct StepLayout {
  std::vector<const std::string*> names;
  std::vector<const TensorHistory*> histories;

  std::size_t size() const { return names.size(); }
  bool operator==(const StepLayout& other) const {
    return names == other.names && histories == other.histories;
  }
};

// The tensors of one step and the generation from which a view sees each one there (its first
// save at the step): position i of `layout` is seen from visible_from[i].
struct StepTensorList {
  std::shared_ptr<const StepLayout> layout;
  std::vector<std::uint64_t> visible_from;
};

// The tensors of the steps asked about most recently. Every rule asks which tensors a step has,
// step after step; finding them means a lookup in every tensor's history (2,000 tensors on a
// small-tensor job, each history elsewhere in memory), so it is done once per step and shared.
// A list stays right for any view (it is filtered by visible_from) until a later generation
// gives a tensor its first save at the step: `changed`, the step's StepInfo::tensors_changed.
// Holds at most `capacity` steps, dropping the least recently used. Thread-safe.
class StepTensorsCache {
 public:
  explicit StepTensorsCache(std::size_t capacity = 64) : capacity_(capacity) {}

  // The list of `step` when one built at or after generation `changed` is held; else nullptr.
  std::shared_ptr<const StepTensorList> find(std::int64_t step, std::uint64_t changed) const;
  // Holds the list of `step` built from `layout` and `visible_from` when generation `built_at`
  // was the store's latest, and returns it. The layout is replaced by the last one held when the
  // two are equal, so that steps with the same tensors share it.
  std::shared_ptr<const StepTensorList> put(std::int64_t step, std::uint64_t built_at,
                                            StepLayout layout,
                                            std::vector<std::uint64_t> visible_from);

 private:
  struct Entry {
    std::int64_t step = 0;
    std::uint64_t built_at = 0;
    std::uint64_t last_used = 0;
    std::shared_ptr<const StepTensorList> list;
  };

  std::size_t capacity_;
  mutable std::mutex mutex_;
  mutable std::vector<Entry> entries_;  // at most capacity_, unordered (a linear search is enough)
  mutable std::uint64_t clock_ = 0;
  std::shared_ptr<const StepLayout> last_layout_;
};

}  // namespace rulestream
