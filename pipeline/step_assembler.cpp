#include "pipeline/step_assembler.hpp"

namespace rulestream {

StepAssembler::StepAssembler(std::chrono::milliseconds grace) : grace_(grace) {}

void StepAssembler::landed(std::int64_t step, const std::string& worker, Clock::time_point now) {
  if (step <= last_released_) {
    ++late_;
    return;
  }
  auto [it, inserted] = pending_.try_emplace(step);
  if (inserted) it->second.first_seen = now;
  it->second.workers.insert(worker);
}

std::vector<StepAssembler::Ready> StepAssembler::take_ready(Clock::time_point now,
                                                            std::optional<std::int64_t> held_from) {
  // The highest step every worker has written: everything below it can go.
  std::int64_t complete_through = -1;
  for (auto it = pending_.rbegin(); it != pending_.rend(); ++it) {
    if (held_from && it->first >= *held_from) continue;
    if (static_cast<int>(it->second.workers.size()) >= num_workers_) {
      complete_through = it->first;
      break;
    }
  }
  std::vector<Ready> ready;
  while (!pending_.empty()) {
    const auto it = pending_.begin();
    if (held_from && it->first >= *held_from) break;
    const bool complete = static_cast<int>(it->second.workers.size()) >= num_workers_;
    const bool overtaken = it->first <= complete_through;
    const bool timed_out = grace_.count() > 0 && now - it->second.first_seen >= grace_;
    if (!(complete || overtaken || ended_ || timed_out)) break;
    ready.push_back({it->first, !complete});
    last_released_ = it->first;
    pending_.erase(it);
  }
  return ready;
}

}  // namespace rulestream
