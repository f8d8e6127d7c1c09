#pragma once

// The plots and the job section of a TensorBoard logdir: every scalar tag, grouped by its
// prefix (the part before the first '/'), one curve per run; the losses (SeriesNaming's role
// Loss) together on one chart with the rules' firings marked; each histogram tag as bands over
// steps, as TensorBoard's distributions draw them: min to max, the 5th to 95th and 25th to 75th
// percentiles and the median (from the buckets), and its mean; mean +- one standard deviation
// (from the sum of squares) where the buckets give no percentiles.
//
// Series are downsampled (downsample.hpp); the losses chart keeps the steps given.
//
// A run restarted from a checkpoint is drawn as TensorBoard draws it (restart_rule.hpp): what
// the restart rewrote replaces the first pass from its first step on, beyond its last step too.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "apps/report/job_report.hpp"
#include "stages/format/tensorboard_event.hpp"
#include "stages/tensorboard/run_reader.hpp"
#include "stages/tensorboard/series_naming.hpp"

namespace rulestream {

// Collects the values read_logdir hands on. Not thread-safe: one reading thread feeds it.
class TensorBoardSeriesCollector final : public TensorBoardValueSink {
 public:
  void on_value(const TensorBoardTag& tag, std::int64_t step, double wall_time,
                const SummaryReading& reading) override;

  std::vector<Chart> charts(const SeriesNaming& naming,
                            std::span<const std::int64_t> keep_steps) const;
  // Steps per mode (by the modes naming gives the scalar tags) and the wall-time span; the
  // caller adds the path, runs and problems.
  void summarize(const SeriesNaming& naming, JobSummary& job) const;

 private:
  struct HistogramPoint {
    std::int64_t step = 0;
    double min = 0, max = 0, mean = 0;
    std::optional<double> std_dev;
    // The 5th, 25th, 50th, 75th and 95th percentiles (HistogramFigures::quantiles).
    std::optional<std::array<double, kHistogramQuantiles.size()>> quantiles;
  };
  struct TagSeries {
    std::string run;
    std::string tag;
    std::vector<SeriesPoint> scalars;        // steps rising (restart_rule.hpp)
    std::vector<HistogramPoint> histograms;  // likewise
  };

  // Run, then tag, to the tag's series. Not keyed by the tag's address: that is stable only
  // for its run's reader, and read_logdir's next reader may reuse it.
  std::map<std::string, std::map<std::string, std::size_t>> index_;
  std::vector<TagSeries> series_;
  std::optional<double> first_wall_time_, last_wall_time_;
};

}  // namespace rulestream
