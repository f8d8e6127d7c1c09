#include "rules/support/training_steps.hpp"

#include <algorithm>

namespace rulestream {

bool is_training_step(const Trial& trial, std::int64_t step) {
  const auto mode = trial.mode(step);
  return mode == Mode::Train || mode == Mode::Global;
}

TensorSaves::Steps TensorSaves::advance(const Trial& trial, const Tensor& tensor, std::int64_t step,
                                        std::size_t depth) {
  if (!seeded_) {
    seeded_ = true;
    const std::vector<std::int64_t> saved = tensor.steps();
    for (auto it = saved.rbegin(); it != saved.rend() && steps_.size() < depth; ++it) {
      if (*it < step && is_training_step(trial, *it)) steps_.push_back(*it);
    }
    std::reverse(steps_.begin(), steps_.end());
  }
  Steps previous(steps_.begin(), std::lower_bound(steps_.begin(), steps_.end(), step));
  if (steps_.empty() || steps_.back() < step) {  // not recorded yet
    steps_.push_back(step);
    if (steps_.size() > depth) steps_.erase(steps_.begin(), steps_.end() - depth);
  }
  return previous;
}

}  // namespace rulestream
