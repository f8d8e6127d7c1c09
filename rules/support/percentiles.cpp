#include "rules/support/percentiles.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace rulestream {
namespace {

// Below this many values, two selections over all of them cost less than sampling.
constexpr std::size_t kFewestSampled = 8192;
constexpr std::size_t kSample = 1024;

// Where q falls among n sorted values: between the order statistics `below` and `below + 1`,
// `fraction` of the way (numpy's linear interpolation).
struct Place {
  std::size_t below = 0;
  double fraction = 0.0;
};

Place place_of(std::size_t n, double q) {
  const double position = q / 100.0 * static_cast<double>(n - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  return {below, position - static_cast<double>(below)};
}

// The percentile at `place` of [first, last), by selection: the order statistic `below`, and
// the next one, the least of what nth_element left after it (none past the last value).
// Reorders [first, last).
double select(std::vector<double>::iterator first, std::vector<double>::iterator last,
              Place place) {
  const auto nth = first + static_cast<std::ptrdiff_t>(place.below);
  std::nth_element(first, nth, last);
  const double low = *nth;
  const double high = nth + 1 != last ? *std::min_element(nth + 1, last) : low;
  return low + (high - low) * place.fraction;
}

// How many sampled values past the expected one each threshold is set, for a tail of share p
// of the values: four standard deviations of where that tail ends in the sample, and a few
// values more.
double margin(double p) {
  return 4.0 * std::sqrt(static_cast<double>(kSample) * p * (1.0 - p)) + 8.0;
}

}  // namespace

std::pair<double, double> percentile_pair(std::vector<double>& values, double q_low,
                                          double q_high) {
  const std::size_t n = values.size();
  const Place low = place_of(n, q_low);
  const Place high = place_of(n, q_high);
  const auto everywhere = [&] {
    return std::pair{select(values.begin(), values.end(), low),
                     select(values.begin(), values.end(), high)};
  };
  if (n < kFewestSampled) return everywhere();

  // A sample spread over the whole tensor, sorted: where each tail's end lies in it.
  std::vector<double> sample(kSample);
  const std::size_t stride = n / kSample;
  for (std::size_t i = 0; i < kSample; ++i) sample[i] = values[i * stride];
  std::sort(sample.begin(), sample.end());
  // The low tail must hold the order statistics `below` and `below + 1`: the values at or below
  // t_low, a prefix of the sorted values, must number at least below + 2. The high tail, a
  // suffix, must begin at or before `below`.
  const double low_share = static_cast<double>(low.below + 2) / static_cast<double>(n);
  const double high_share = static_cast<double>(n - high.below) / static_cast<double>(n);
  const double low_at = low_share * kSample + margin(low_share);
  const double high_at = (1.0 - high_share) * kSample - margin(high_share);
  if (low_at >= kSample - 1 || high_at <= 0.0) return everywhere();  // tails too wide to pay
  const double t_low = sample[static_cast<std::size_t>(std::ceil(low_at))];
  const double t_high = sample[static_cast<std::size_t>(std::floor(high_at))];
  if (!(t_low < t_high)) return everywhere();  // the tails would meet: few distinct values

  std::vector<double> low_tail;
  std::vector<double> high_tail;
  const auto expected =
      static_cast<std::size_t>((std::max(low_at, static_cast<double>(kSample) - high_at) + 16.0) *
                               static_cast<double>(stride));
  low_tail.reserve(expected);
  high_tail.reserve(expected);
  for (const double x : values) {
    if (x <= t_low) {
      low_tail.push_back(x);
    } else if (x >= t_high) {
      high_tail.push_back(x);
    }
  }
  const std::size_t high_first = n - high_tail.size();  // the sorted rank where it begins
  if (low_tail.size() < low.below + 2 || high_first > high.below) return everywhere();
  return {select(low_tail.begin(), low_tail.end(), low),
          select(high_tail.begin(), high_tail.end(), {high.below - high_first, high.fraction})};
}

}  // namespace rulestream
