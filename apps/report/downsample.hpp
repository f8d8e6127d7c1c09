#pragma once

// Fewer points for plotting, without hiding what a person looks for: a 100,000-step series is
// cut into buckets of consecutive points, and each bucket keeps its smallest and largest finite
// values and its first and last non-finite ones (so a spike, a collapse or a NaN stretch stays
// visible however far the page zooms out). Every point at a step in `keep_steps` (where a rule
// fired) is kept, and the first and last points of the series. Then a run of equal values keeps
// only its ends: a flat line costs two points.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "apps/report/job_report.hpp"

namespace rulestream {

// `points` in step order; `keep_steps` sorted ascending. With `buckets` >= points.size() / 2
// nothing is dropped but the interiors of equal runs. Returns a subsequence of `points`.
std::vector<SeriesPoint> downsample(std::span<const SeriesPoint> points, std::size_t buckets,
                                    std::span<const std::int64_t> keep_steps);

// The buckets a report uses: about 2,000 points at most per curve (plus the steps kept).
inline constexpr std::size_t kReportBuckets = 1000;

}  // namespace rulestream
