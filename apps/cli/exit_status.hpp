#pragma once

// The exit status of a `watch` or `replay` (docs/cli.md, "Exit status"): what a CI gate acts on.

#include "engine/graph/job_outcome.hpp"

namespace rulestream::cli {

// 0 when no rule fired, 1 when a rule fired, 2 on an error: a source that failed, a rule that
// ended in Error. A replay cut short (Ctrl-C) has not shown the job healthy: 1 when a rule
// fired in what was read (the rules that did not are in Error for the interruption alone, and
// what fired is the news a gate acts on), 2 when none did.
int exit_status_of(const JobOutcome& outcome);

}  // namespace rulestream::cli
