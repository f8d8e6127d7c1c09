#pragma once

// A value far above its series' recent level, robustly: the level is an exponential moving
// average with a span of `window` values, the spread the same average of absolute deviations
// from it, scaled to a standard deviation (x 1.2533, as for normally distributed values), and a
// value beyond the threshold enters both clipped to it, so one spike does not hide the next or
// teach the series that spikes are normal. Constant work and memory per value: a rule can watch
// every tag of a large logdir.

#include <cstdint>

namespace rulestream {

struct SpikeOptions {
  std::int64_t window = 50;   // the averages' span, in values (alpha = 2 / (window + 1))
  double threshold = 5.0;     // robust deviations above the level
  double min_increase = 1.0;  // and at least this fraction of the level's magnitude above it
  std::int64_t warmup = 20;   // values that only teach the level (a loss falls fast at first)
};

struct SpikeVerdict {
  bool spike = false;
  double level = 0.0;       // before this value
  double spread = 0.0;      // the robust standard deviation before this value
  double deviations = 0.0;  // (value - level) / spread; infinite when spread is 0 and value > level
};

class SpikeDetector {
 public:
  explicit SpikeDetector(SpikeOptions options);

  // Judges a finite value against what came before, then learns from it.
  SpikeVerdict add(double value);

  std::int64_t seen() const { return seen_; }

 private:
  SpikeOptions options_;
  double alpha_;
  double level_ = 0.0;
  double mean_abs_deviation_ = 0.0;
  std::int64_t seen_ = 0;
};

}  // namespace rulestream
