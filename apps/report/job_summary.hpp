#pragma once

// The "job" section of a report: where it is, its format, its workers (or runs), its steps per
// mode, the time it spans and whether it ended.

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/report/job_report.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {

// An smdebug trial as it is loaded now. Times are the steps' arrivals (the index files'
// modification times in a replay).
JobSummary summarize_trial(const Trial& trial);

// Steps of one mode, counted and bounded; `steps` in any order, each once.
StepRange step_range(const std::vector<std::int64_t>& steps);

}  // namespace rulestream
