#include "apps/report/job_summary.hpp"

#include <algorithm>

#include "core/model/mode.hpp"

namespace rulestream {

StepRange step_range(const std::vector<std::int64_t>& steps) {
  StepRange range;
  if (steps.empty()) return range;
  const auto [first, last] = std::minmax_element(steps.begin(), steps.end());
  range.count = static_cast<std::int64_t>(steps.size());
  range.first = *first;
  range.last = *last;
  return range;
}

JobSummary summarize_trial(const Trial& trial) {
  JobSummary job;
  job.path = trial.path();
  job.format = "smdebug";
  job.workers = trial.workers();
  const std::vector<std::int64_t> all_steps = trial.steps(Mode::Global, true);
  for (const Mode mode : trial.modes()) {
    // Global steps, so that the ranges read on the same axis as the plots.
    std::vector<std::int64_t> steps;
    for (const std::int64_t step : all_steps) {
      if (trial.mode(step) == mode) steps.push_back(step);
    }
    job.steps_by_mode[std::string(mode_name(mode))] = step_range(steps);
  }
  for (const std::int64_t step : all_steps) {
    const auto arrival = trial.step_arrival(step);
    if (!arrival) continue;
    if (!job.first_time || *arrival < *job.first_time) job.first_time = arrival;
    if (!job.last_time || *arrival > *job.last_time) job.last_time = arrival;
  }
  job.ended = trial.has_training_ended();
  for (const auto& problem : trial.problems()) job.problems.push_back(problem.message);
  return job;
}

}  // namespace rulestream
