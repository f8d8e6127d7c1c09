#pragma once

// The whole of it, for `rulestream report` and a later `serve`: a job's path and rules in, its
// page out.

#include <ostream>

#include "apps/report/job_report.hpp"
#include "engine/graph/pipeline_config.hpp"

namespace rulestream {

// Loads the charting library first (so a missing library fails before the replay), builds the
// report (report_builder.hpp) and writes its page to `out`. Returns the report, whose rules
// say how the replay went. Throws what load_chart_library and build_job_report throw.
JobReport write_report_page(PipelineConfig config, std::ostream& out);

}  // namespace rulestream
