#include "apps/cli/exit_status.hpp"

#include "apps/cli/cli.hpp"

namespace rulestream::cli {

int exit_status_of(const JobOutcome& outcome) {
  // A source that failed was said when it happened ("rulestream: reading the job failed: ...")
  // and is in every status.
  if (!outcome.source_failure.empty()) return kExitError;
  if (outcome.interrupted) return outcome.conditions_met > 0 ? kExitRuleFired : kExitError;
  if (outcome.rule_errors) return kExitError;
  return outcome.conditions_met > 0 ? kExitRuleFired : kExitOk;
}

}  // namespace rulestream::cli
