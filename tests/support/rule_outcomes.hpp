#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rules/rule.hpp"

namespace rulestream::testing {

// What each step of a rule run did, as smdebug-samples' reference records it around
// Rule.invoke: "True", "False", or the name of the exception that ended the step.
struct RecordedRun {
  std::map<std::int64_t, std::string> per_step_outcome;
  std::vector<std::int64_t> triggered_steps;
  std::string ended_with;  // "NoMoreData", or "" when end_step was reached
};

// Steps `rule` from start_step as invoke_rule does (NoMoreData ends the run), recording every
// step's outcome. Exceptions invoke_rule would not catch propagate.
RecordedRun run_recording_outcomes(Rule& rule, std::int64_t start_step = 0,
                                   std::optional<std::int64_t> end_step = std::nullopt);

}  // namespace rulestream::testing
