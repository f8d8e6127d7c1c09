#include "apps/report/tensorboard_charts.hpp"

#include <algorithm>
#include <cmath>

#include "apps/report/chart_lines.hpp"
#include "apps/report/job_summary.hpp"
#include "core/model/mode.hpp"
#include "stages/tensorboard/restart_rule.hpp"

namespace rulestream {
namespace {

std::string prefix_of(const std::string& tag) {
  const auto slash = tag.find('/');
  return slash == std::string::npos || slash == 0 ? "scalars" : tag.substr(0, slash);
}

std::string run_label(const std::string& run, const std::string& fallback) {
  return run.empty() || run == "." ? fallback : run;
}

// Wall times the report takes for dates: 2001-09-09 (1e9 s) to 2100-01-01.
constexpr double kEarliestDate = 1e9;
constexpr double kLatestDate = 4102444800.0;

}  // namespace

void TensorBoardSeriesCollector::on_value(const TensorBoardTag& tag, std::int64_t step,
                                          double wall_time, const SummaryReading& reading) {
  if (reading.kind != TagKind::Scalar && reading.kind != TagKind::Histogram) return;
  // Neither lookup copies a name unless the tag is new.
  auto [found, added] = index_[tag.run].try_emplace(tag.name, series_.size());
  if (added) series_.push_back({.run = tag.run, .tag = tag.name});
  TagSeries& series = series_[found->second];
  // The job's time span, from the wall times that are dates: not a value without a time (NaN:
  // a CSV log without a time column), nor seconds since the run's start (a log's elapsed-time
  // column), nor a time no clock gives (a corrupt record's).
  if (wall_time >= kEarliestDate && wall_time <= kLatestDate) {
    if (!first_wall_time_ || wall_time < *first_wall_time_) first_wall_time_ = wall_time;
    if (!last_wall_time_ || wall_time > *last_wall_time_) last_wall_time_ = wall_time;
  }
  if (reading.kind == TagKind::Scalar) {
    keep_by_restart_rule(series.scalars, SeriesPoint{step, reading.scalar});
    return;
  }
  const HistogramFigures& figures = reading.histogram;
  HistogramPoint point{.step = step,
                       .min = figures.min,
                       .max = figures.max,
                       .mean = figures.mean(),
                       .std_dev = std::nullopt,
                       .quantiles = figures.quantiles};
  if (figures.sum_squares && figures.num > 0) {
    const double variance = *figures.sum_squares / figures.num - point.mean * point.mean;
    point.std_dev = std::sqrt(std::max(0.0, variance));  // rounding may dip below zero
  }
  keep_by_restart_rule(series.histograms, std::move(point));
}

std::vector<Chart> TensorBoardSeriesCollector::charts(
    const SeriesNaming& naming, std::span<const std::int64_t> keep_steps) const {
  Chart losses{.group = "losses", .title = "loss", .marks_firings = true};
  std::map<std::string, std::map<std::string, Chart>> scalars;  // prefix, tag
  std::vector<Chart> histograms;
  for (const TagSeries& series : series_) {
    if (!series.scalars.empty()) {
      const std::vector<SeriesPoint>& points = series.scalars;
      const SeriesInfo info = naming.describe(series.run, series.tag);
      if (info.role == SeriesRole::Loss) {
        losses.lines.push_back(
            downsampled_line(info.display_name(), ChartLine::Kind::Line, points, keep_steps));
      }
      Chart& chart = scalars[prefix_of(series.tag)][series.tag];
      chart.group = prefix_of(series.tag);
      chart.title = series.tag;
      // Firings are kept on the losses chart only (see smdebug_charts.cpp).
      chart.lines.push_back(
          downsampled_line(run_label(series.run, series.tag), ChartLine::Kind::Line, points, {}));
    }
    if (!series.histograms.empty()) {
      const auto& points = series.histograms;
      std::vector<SeriesPoint> mean, min, max, below, above;
      // By quantile (kHistogramQuantiles): 5th, 25th, median, 75th, 95th percentile.
      std::array<std::vector<SeriesPoint>, kHistogramQuantiles.size()> quantiles;
      bool has_std = true;
      bool has_quantiles = true;
      for (const auto& point : points) {
        mean.push_back({point.step, point.mean});
        min.push_back({point.step, point.min});
        max.push_back({point.step, point.max});
        has_std = has_std && point.std_dev.has_value();
        const double std_dev = point.std_dev.value_or(0.0);
        below.push_back({point.step, point.mean - std_dev});
        above.push_back({point.step, point.mean + std_dev});
        has_quantiles = has_quantiles && point.quantiles.has_value();
        for (std::size_t q = 0; q < quantiles.size() && has_quantiles; ++q) {
          quantiles[q].push_back({point.step, (*point.quantiles)[q]});
        }
      }
      Chart chart{.group = "histograms", .title = series.tag};
      if (series.run != ".") chart.title = series.run + ": " + series.tag;
      const auto add_band = [&](const std::string& label, const std::vector<SeriesPoint>& low,
                                const std::vector<SeriesPoint>& high) {
        for (auto& line : band_lines(label, low, high, {})) chart.lines.push_back(std::move(line));
      };
      add_band("min to max", min, max);
      // TensorBoard's distributions: percentile bands from the buckets; mean +- std (from the
      // sum of squares) where the buckets do not give them.
      if (has_quantiles) {
        add_band("5th to 95th percentile", quantiles[0], quantiles[4]);
        add_band("25th to 75th percentile", quantiles[1], quantiles[3]);
        chart.lines.push_back(downsampled_line("median", ChartLine::Kind::Line, quantiles[2], {}));
      } else if (has_std) {
        add_band("mean +- std", below, above);
      }
      chart.lines.push_back(downsampled_line("mean", ChartLine::Kind::Line, mean, {}));
      histograms.push_back(std::move(chart));
    }
  }
  std::vector<Chart> charts;
  if (!losses.lines.empty()) charts.push_back(std::move(losses));
  for (auto& [prefix, tags] : scalars) {
    for (auto& [tag, chart] : tags) charts.push_back(std::move(chart));
  }
  for (auto& chart : histograms) charts.push_back(std::move(chart));
  return charts;
}

void TensorBoardSeriesCollector::summarize(const SeriesNaming& naming, JobSummary& job) const {
  std::map<Mode, std::vector<std::int64_t>> steps;
  for (const TagSeries& series : series_) {
    if (series.scalars.empty()) continue;
    auto& mode_steps = steps[naming.describe(series.run, series.tag).mode];
    for (const auto& point : series.scalars) mode_steps.push_back(point.step);
  }
  for (auto& [mode, mode_steps] : steps) {
    std::sort(mode_steps.begin(), mode_steps.end());
    mode_steps.erase(std::unique(mode_steps.begin(), mode_steps.end()), mode_steps.end());
    job.steps_by_mode[std::string(mode_name(mode))] = step_range(mode_steps);
  }
  const auto time_of = [](double seconds) {
    return std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::duration<double>(seconds)));
  };
  if (first_wall_time_) job.first_time = time_of(*first_wall_time_);
  if (last_wall_time_) job.last_time = time_of(*last_wall_time_);
}

}  // namespace rulestream
