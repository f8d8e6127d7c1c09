#pragma once

#include <cstdint>
#include <string>

#include "core/model/rule_event.hpp"

namespace rulestream::testing {

// A ConditionMet event at `step` that differs from every other step's, with a message that
// needs escaping in JSON (quotes, a backslash, non-ASCII).
RuleEvent sample_rule_event(std::int64_t step, std::string rule_configuration = "VG");

// The end-of-trial status event of a rule.
RuleEvent sample_status_event(RuleStatus status, std::string rule_configuration = "VG");

}  // namespace rulestream::testing
