#pragma once

// A job's report, made from its path and rules: what `rulestream report` writes and what a
// `serve` would show at /jobs/{id}/report. The job is replayed with the rules (events go to the
// report only), then its series are read for the plots.

#include <vector>

#include "apps/report/job_report.hpp"
#include "engine/graph/pipeline_config.hpp"
#include "engine/graph/trial_presence.hpp"

namespace rulestream {

// Replays config.paths (the first is the job; others are there for rules that compare runs)
// with config.rules (default_rules_for its format when empty, engine/graph/job.hpp) and collects
// the report. A report is a
// look back: it never follows, never stops training and notifies no one, so the rules' stop
// and notify actions and the configured sinks are set aside. Throws StorageError for a path
// that holds no job of a known format, RuleConfigError for a bad rule
// configuration; a job that cannot be read to the end is reported (its problems, the rules'
// Error statuses), not thrown.
JobReport build_job_report(PipelineConfig config);

}  // namespace rulestream
