#include "rules/training_steps.hpp"

namespace rulestream {

bool is_training_step(const Trial& trial, std::int64_t step) {
  const auto mode = trial.mode(step);
  return mode == Mode::Train || mode == Mode::Global;
}

std::vector<std::int64_t> SavedStepHistory::before(const Trial& trial, const Tensor& tensor,
                                                   std::int64_t step) {
  auto found = steps_.find(tensor.name());
  if (found == steps_.end()) {
    std::deque<std::int64_t> seeded;
    const std::vector<std::int64_t> saved = tensor.steps();
    for (auto it = saved.rbegin(); it != saved.rend() && seeded.size() < depth_; ++it) {
      if (*it < step && is_training_step(trial, *it)) seeded.push_front(*it);
    }
    found = steps_.emplace(tensor.name(), std::move(seeded)).first;
  }
  std::vector<std::int64_t> result;
  for (const std::int64_t saved : found->second) {
    if (saved < step) result.push_back(saved);
  }
  return result;
}

void SavedStepHistory::record(const std::string& tensor, std::int64_t step) {
  std::deque<std::int64_t>& history = steps_[tensor];
  if (!history.empty() && history.back() >= step) return;  // already recorded
  history.push_back(step);
  while (history.size() > depth_) history.pop_front();
}

}  // namespace rulestream
