#include "rules/support/spike_detector.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rulestream {
namespace {

// Mean absolute deviation to standard deviation, for normally distributed values: sqrt(pi / 2).
constexpr double kDeviationToSigma = 1.2533141373155003;

}  // namespace

SpikeDetector::SpikeDetector(SpikeOptions options)
    : options_(options), alpha_(2.0 / (static_cast<double>(options.window) + 1.0)) {}

SpikeVerdict SpikeDetector::add(double value) {
  SpikeVerdict verdict;
  if (seen_ == 0) {
    level_ = value;
    ++seen_;
    verdict.level = value;
    return verdict;
  }
  verdict.level = level_;
  verdict.spread = kDeviationToSigma * mean_abs_deviation_;
  const double above = value - level_;
  verdict.deviations = verdict.spread > 0.0 ? above / verdict.spread
                       : above > 0.0        ? std::numeric_limits<double>::infinity()
                                            : 0.0;
  const bool warm = seen_ >= options_.warmup;
  verdict.spike = warm && verdict.deviations > options_.threshold &&
                  above > options_.min_increase * std::abs(level_);
  // Learn from the value, clipped once warm to the largest that would not have been a spike: a
  // spike moves the level little, a lasting shift a little at each value until it is learned.
  double learned = value;
  if (warm) {
    const double band =
        std::max(options_.threshold * verdict.spread, options_.min_increase * std::abs(level_));
    learned = std::clamp(value, level_ - band, level_ + band);
  }
  const double deviation = std::abs(learned - level_);
  level_ += alpha_ * (learned - level_);
  mean_abs_deviation_ += alpha_ * (deviation - mean_abs_deviation_);
  ++seen_;
  return verdict;
}

}  // namespace rulestream
