#include "trial/store/step_tensors_cache.hpp"

#include <algorithm>
#include <utility>

namespace rulestream {

std::shared_ptr<const StepTensorList> StepTensorsCache::find(std::int64_t step,
                                                             std::uint64_t changed) const {
  std::lock_guard lock(mutex_);
  for (Entry& entry : entries_) {
    if (entry.step != step) continue;
    if (entry.built_at < changed) return nullptr;
    entry.last_used = ++clock_;
    return entry.list;
  }
  return nullptr;
}

std::shared_ptr<const StepTensorList> StepTensorsCache::put(
    std::int64_t step, std::uint64_t built_at, StepLayout layout,
    std::vector<std::uint64_t> visible_from) {
  auto list = std::make_shared<StepTensorList>();
  list->visible_from = std::move(visible_from);
  std::lock_guard lock(mutex_);
  if (last_layout_ && *last_layout_ == layout) {
    list->layout = last_layout_;
  } else {
    list->layout = last_layout_ = std::make_shared<const StepLayout>(std::move(layout));
  }
  if (capacity_ == 0) return list;
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const Entry& entry) { return entry.step == step; });
  if (it == entries_.end()) {
    if (entries_.size() < capacity_) {
      it = entries_.emplace(entries_.end());
    } else {
      it = std::min_element(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
        return a.last_used < b.last_used;
      });
    }
  } else if (it->built_at > built_at) {
    return it->list;  // a newer list of the step is held already (two threads built it at once)
  }
  *it = Entry{step, built_at, ++clock_, list};
  return list;
}

}  // namespace rulestream
