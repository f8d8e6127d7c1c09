#include "apps/report/chart_lines.hpp"

#include <algorithm>

#include "apps/report/downsample.hpp"

namespace rulestream {

ChartLine downsampled_line(std::string label, ChartLine::Kind kind,
                           const std::vector<SeriesPoint>& points,
                           std::span<const std::int64_t> keep_steps) {
  ChartLine line;
  line.label = std::move(label);
  line.kind = kind;
  line.original_points = points.size();
  line.points = downsample(points, kReportBuckets, keep_steps);
  return line;
}

std::vector<ChartLine> band_lines(const std::string& label, const std::vector<SeriesPoint>& low,
                                  const std::vector<SeriesPoint>& high,
                                  std::span<const std::int64_t> keep_steps) {
  std::vector<std::int64_t> steps;
  for (const auto* edge : {&low, &high}) {
    for (const auto& point : downsample(*edge, kReportBuckets, keep_steps)) {
      steps.push_back(point.step);
    }
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  std::vector<ChartLine> lines(2);
  lines[0] = {
      .label = label + " (min)", .kind = ChartLine::Kind::BandLow, .original_points = low.size()};
  lines[1] = {
      .label = label + " (max)", .kind = ChartLine::Kind::BandHigh, .original_points = high.size()};
  for (std::size_t i = 0, next = 0; i < low.size() && next < steps.size(); ++i) {
    if (low[i].step != steps[next]) continue;
    lines[0].points.push_back(low[i]);
    lines[1].points.push_back(high[i]);
    ++next;
  }
  return lines;
}

}  // namespace rulestream
