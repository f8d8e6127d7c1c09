#include "apps/report/series_charts.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <string>

#include "apps/report/chart_lines.hpp"
#include "apps/report/job_summary.hpp"
#include "core/model/mode.hpp"

namespace rulestream {
namespace {

std::string prefix_of(const std::string& tag) {
  const auto slash = tag.find('/');
  return slash == std::string::npos || slash == 0 ? "scalars" : tag.substr(0, slash);
}

std::string run_label(const std::string& run, const std::string& fallback) {
  return run.empty() || run == "." ? fallback : run;
}

// What a histogram is drawn with, per step.
struct DrawnHistogram {
  std::int64_t step = 0;
  double min = 0, max = 0, mean = 0;
  std::optional<double> std_dev;
  // The 5th, 25th, 50th, 75th and 95th percentiles (HistogramFigures::quantiles).
  std::optional<std::array<double, kHistogramQuantiles.size()>> quantiles;
};

DrawnHistogram drawn(const StoredHistogram& stored) {
  const HistogramFigures& figures = stored.figures;
  DrawnHistogram point{.step = stored.step,
                       .min = figures.min,
                       .max = figures.max,
                       .mean = figures.mean(),
                       .std_dev = std::nullopt,
                       .quantiles = figures.quantiles};
  if (figures.sum_squares && figures.num > 0) {
    const double variance = *figures.sum_squares / figures.num - point.mean * point.mean;
    point.std_dev = std::sqrt(std::max(0.0, variance));  // rounding may dip below zero
  }
  return point;
}

std::vector<SeriesPoint> scalar_points(const StoredSeries& series) {
  std::vector<SeriesPoint> points;
  points.reserve(series.scalars.size());
  for (const StoredScalar& value : series.scalars) points.push_back({value.step, value.value});
  return points;
}

// The bands of a histogram tag over its steps.
Chart histogram_chart(const StoredSeries& series) {
  std::vector<SeriesPoint> mean, min, max, below, above;
  // By quantile (kHistogramQuantiles): 5th, 25th, median, 75th, 95th percentile.
  std::array<std::vector<SeriesPoint>, kHistogramQuantiles.size()> quantiles;
  bool has_std = true;
  bool has_quantiles = true;
  for (const StoredHistogram& stored : series.histograms) {
    const DrawnHistogram point = drawn(stored);
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
  // TensorBoard's distributions: percentile bands from the buckets; mean +- std (from the sum of
  // squares) where the buckets do not give them.
  if (has_quantiles) {
    add_band("5th to 95th percentile", quantiles[0], quantiles[4]);
    add_band("25th to 75th percentile", quantiles[1], quantiles[3]);
    chart.lines.push_back(downsampled_line("median", ChartLine::Kind::Line, quantiles[2], {}));
  } else if (has_std) {
    add_band("mean +- std", below, above);
  }
  chart.lines.push_back(downsampled_line("mean", ChartLine::Kind::Line, mean, {}));
  return chart;
}

}  // namespace

std::vector<Chart> series_charts(const SeriesStore& store, const SeriesNaming& naming,
                                 std::span<const std::int64_t> keep_steps) {
  Chart losses{.group = "losses", .title = "loss", .marks_firings = true};
  std::map<std::string, std::map<std::string, Chart>> scalars;  // prefix, tag
  std::vector<Chart> histograms;
  for (const RunSeries* run : store.runs()) {
    const bool reinforcement = std::any_of(
        run->tags().begin(), run->tags().end(),
        [&](const StoredSeries& series) { return naming.names_reinforcement(series.tag); });
    for (const StoredSeries& series : run->tags()) {
      if (!series.scalars.empty()) {
        const std::vector<SeriesPoint> points = scalar_points(series);
        const SeriesInfo info = naming.describe(series.run, series.tag, reinforcement);
        if (info.role == SeriesRole::Loss || info.role == SeriesRole::ReinforcementLoss) {
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
      if (!series.histograms.empty()) histograms.push_back(histogram_chart(series));
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

void summarize_series(const SeriesStore& store, const SeriesNaming& naming, JobSummary& job) {
  std::map<Mode, std::vector<std::int64_t>> steps;
  for (const RunSeries* run : store.runs()) {
    for (const StoredSeries& series : run->tags()) {
      if (series.scalars.empty()) continue;
      auto& mode_steps = steps[naming.describe(series.run, series.tag).mode];
      for (const StoredScalar& value : series.scalars) mode_steps.push_back(value.step);
    }
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
  if (const auto span = store.dated_span()) {
    job.first_time = time_of(span->first);
    job.last_time = time_of(span->second);
  }
}

}  // namespace rulestream
