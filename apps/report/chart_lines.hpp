#pragma once

// Curves ready for a chart: downsampled (downsample.hpp), keeping the steps where rules fired.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "apps/report/job_report.hpp"

namespace rulestream {

// `points` in step order, downsampled to kReportBuckets buckets.
ChartLine downsampled_line(std::string label, ChartLine::Kind kind,
                           const std::vector<SeriesPoint>& points,
                           std::span<const std::int64_t> keep_steps);

// A band's two edges ("LABEL (min)", "LABEL (max)"), `low` and `high` with the same steps:
// each edge downsampled, then both taken at the union of the steps either kept, since the page
// fills between points of the same steps.
std::vector<ChartLine> band_lines(const std::string& label, const std::vector<SeriesPoint>& low,
                                  const std::vector<SeriesPoint>& high,
                                  std::span<const std::int64_t> keep_steps);

}  // namespace rulestream
