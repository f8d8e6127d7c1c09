#pragma once

// The parts of a report that are the format's own: the job section (what the job holds: steps
// per mode, workers or runs, its time span) and the plots. An smdebug job's come from the trial
// its rules read; a series format's from the series its job kept (PipelineConfig::keep_series),
// so that the report reads the job once. Everything else in a report (the rules table, the
// problems) comes from the job's outcome, the same for every format (report_builder.cpp).

#include <cstdint>
#include <span>

#include "apps/report/job_report.hpp"
#include "core/model/storage.hpp"
#include "engine/graph/job.hpp"
#include "engine/graph/pipeline_config.hpp"

namespace rulestream {

// Fills report.job and report.charts for `job`, which has run over `storage` (the job's place)
// with `config`. The losses chart keeps `firing_steps` through downsampling.
void add_format_sections(const Job& job, const PipelineConfig& config, const Storage& storage,
                         std::span<const std::int64_t> firing_steps, JobReport& report);

}  // namespace rulestream
