#include "tests/support/overtaking_gate.hpp"

namespace rulestream::testing {

void OvertakingGate::finished(std::int64_t step) {
  std::unique_lock lock(mutex_);
  if (step == 0) {
    overtaken_ = step_one_done_.wait_for(lock, wait_, [&] { return step_one_finished_; });
  }
  if (step == 1) {
    step_one_finished_ = true;
    step_one_done_.notify_all();
  }
}

bool OvertakingGate::overtaken() const {
  const std::lock_guard lock(mutex_);
  return overtaken_;
}

}  // namespace rulestream::testing
