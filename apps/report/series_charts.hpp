#pragma once

// The plots and the job section of a job of a series format (a TensorBoard logdir, a folder of
// text metrics): every scalar tag, grouped by its prefix (the part before the first '/'), one
// curve per run; the losses (SeriesNaming's role Loss) together on one chart with the rules'
// firings marked; each histogram tag as bands over steps, as TensorBoard's distributions draw
// them: min to max, the 5th to 95th and 25th to 75th percentiles and the median (from the
// buckets), and its mean; mean +- one standard deviation (from the sum of squares) where the
// buckets give no percentiles.
//
// Series are downsampled (downsample.hpp); the losses chart keeps the steps given.
//
// A run restarted from a checkpoint is drawn as TensorBoard draws it (the store applies
// restart_rule.hpp): what the restart rewrote replaces the first pass from its first step on,
// beyond its last step too.

#include <cstdint>
#include <span>
#include <vector>

#include "apps/report/job_report.hpp"
#include "stages/series/series_naming.hpp"
#include "stages/series/series_store.hpp"

namespace rulestream {

// The charts of a job's series, as read into `store` (KeptOrder::TensorBoard). `keep_steps`:
// the steps the losses chart keeps however it is downsampled (the rules' firings).
std::vector<Chart> series_charts(const SeriesStore& store, const SeriesNaming& naming,
                                 std::span<const std::int64_t> keep_steps);
// Steps per mode (by the modes naming gives the scalar tags) and the dated span of the wall
// times; the caller adds the path, runs and problems.
void summarize_series(const SeriesStore& store, const SeriesNaming& naming, JobSummary& job);

}  // namespace rulestream
