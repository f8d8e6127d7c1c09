#include "stages/assemble/step_assembler.hpp"

#include <iterator>

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
  // The highest step every worker has written: everything below it can go. Searched from below
  // the held steps, not from the last step: a replay lands steps far ahead of the one being
  // read, and passing over all of them at every landing made assembling quadratic in the
  // job's steps.
  std::int64_t complete_through = -1;
  const auto below_held = held_from ? pending_.lower_bound(*held_from) : pending_.end();
  for (auto it = std::make_reverse_iterator(below_held); it != pending_.rend(); ++it) {
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
