#include "rules/training_steps.hpp"

#include <algorithm>

namespace rulestream {

bool is_training_step(const Trial& trial, std::int64_t step) {
  const auto mode = trial.mode(step);
  return mode == Mode::Train || mode == Mode::Global;
}

SavedStepHistory::Steps SavedStepHistory::advance(const Trial& trial, const Tensor& tensor,
                                                  std::int64_t step) {
  auto found = steps_.find(&tensor.name());
  if (found == steps_.end()) {
    std::vector<std::int64_t> seeded;
    const std::vector<std::int64_t> saved = tensor.steps();
    for (auto it = saved.rbegin(); it != saved.rend() && seeded.size() < depth_; ++it) {
      if (*it < step && is_training_step(trial, *it)) seeded.push_back(*it);
    }
    std::reverse(seeded.begin(), seeded.end());
    found = steps_.emplace(&tensor.name(), std::move(seeded)).first;
  }
  std::vector<std::int64_t>& history = found->second;
  Steps previous(history.begin(), std::lower_bound(history.begin(), history.end(), step));
  if (history.empty() || history.back() < step) {  // not recorded yet
    history.push_back(step);
    if (history.size() > depth_) history.erase(history.begin(), history.end() - depth_);
  }
  return previous;
}

}  // namespace rulestream
