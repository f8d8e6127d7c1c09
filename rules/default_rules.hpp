#pragma once

// The rules a TensorBoard logdir is judged by when the user names none (`rulestream rules
// --defaults` lists them; a rules file names them as "defaults"). Chosen and tuned on labelled
// real runs (benchmarks/alert_quality.sh, docs/rules.md): each one looks for a fault a person
// acts on, fires once per incident and stays quiet on healthy runs. A rule of this set whose
// inputs a logdir does not have (no gradient norm logged) says so in its status, NotApplicable,
// rather than failing the job. smdebug trials have no such set: their rules are SageMaker's, named
// by the user.

#include <string>
#include <string_view>
#include <vector>

namespace rulestream {

// The rule names, in the order their statuses are reported.
const std::vector<std::string>& default_rule_names();

// True for a rule of the default set: its firings group into incidents unless a rules file says
// otherwise (engine/graph/incident_policy.hpp); the other rules fire per step, as smdebug's do.
bool judges_by_incident(std::string_view rule);

}  // namespace rulestream
