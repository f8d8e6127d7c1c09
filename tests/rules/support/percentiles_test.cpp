// percentile_pair against numpy's definition worked out on a fully sorted copy: sorted[k] +
// (sorted[k + 1] - sorted[k]) * fraction at position q / 100 * (n - 1), k its floor. Equal to
// the last bit on every kind of tensor, including those where the sampled tails miss and it
// selects over all the values.
#include "rules/support/percentiles.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace rulestream {
namespace {

double reference(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double position = q / 100.0 * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const double low = values[below];
  const double high = below + 1 < values.size() ? values[below + 1] : low;
  return low + (high - low) * (position - static_cast<double>(below));
}

void expect_as_numpy(const std::vector<double>& values, double q_low, double q_high,
                     const std::string& what) {
  std::vector<double> copy = values;
  const auto [low, high] = percentile_pair(copy, q_low, q_high);
  EXPECT_EQ(low, reference(values, q_low)) << what << ", q " << q_low << ", n " << values.size();
  EXPECT_EQ(high, reference(values, q_high)) << what << ", q " << q_high << ", n " << values.size();
  std::sort(copy.begin(), copy.end());
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(copy, sorted) << what << ": reordered, never changed";
}

std::vector<double> normal(std::size_t n, std::uint32_t seed) {
  std::mt19937 random(seed);
  std::normal_distribution<double> draw(0.0, 1e-3);
  std::vector<double> values(n);
  for (double& value : values) value = draw(random);
  return values;
}

TEST(PercentilePair, MatchesNumpyOnGradientsOfEverySize) {
  for (const std::size_t n : {1UL, 2UL, 3UL, 100UL, 8191UL, 8192UL, 8193UL, 65536UL, 300001UL}) {
    const auto values = normal(n, static_cast<std::uint32_t>(n));
    expect_as_numpy(values, 5.0, 95.0, "normal");
    expect_as_numpy(values, 0.0, 100.0, "normal, the extremes");
    expect_as_numpy(values, 25.0, 75.0, "normal, the quartiles");
    expect_as_numpy(values, 50.0, 50.0, "normal, the median twice");
  }
}

TEST(PercentilePair, MatchesNumpyOnOrderedSkewedAndInfiniteValues) {
  const std::size_t n = 65536;
  std::vector<double> ascending(n);
  for (std::size_t i = 0; i < n; ++i) ascending[i] = static_cast<double>(i) * 0.5;
  expect_as_numpy(ascending, 5.0, 95.0, "ascending");
  std::vector<double> descending(ascending.rbegin(), ascending.rend());
  expect_as_numpy(descending, 5.0, 95.0, "descending");

  std::mt19937 random(7);
  std::exponential_distribution<double> draw(3.0);
  std::vector<double> skewed(n);
  for (double& value : skewed) value = draw(random);
  expect_as_numpy(skewed, 5.0, 95.0, "exponential");

  std::vector<double> infinite = normal(n, 11);
  for (std::size_t i = 0; i < n; i += 97) infinite[i] = std::numeric_limits<double>::infinity();
  for (std::size_t i = 5; i < n; i += 89) infinite[i] = -std::numeric_limits<double>::infinity();
  expect_as_numpy(infinite, 5.0, 95.0, "with infinities");
}

// Where the sample brackets the tails badly or not at all: a few distinct values (the tails
// would meet), and values laid out so that the sampled ones say nothing of the rest.
TEST(PercentilePair, MatchesNumpyWhereTheSampleMisses) {
  const std::size_t n = 65536;
  std::vector<double> constant(n, 0.25);
  expect_as_numpy(constant, 5.0, 95.0, "constant");

  std::vector<double> three_levels = normal(n, 3);
  for (double& value : three_levels) value = value < -1e-3 ? -1.0 : (value > 1e-3 ? 1.0 : 0.0);
  expect_as_numpy(three_levels, 5.0, 95.0, "three levels");

  // The sample takes every (n / 1024)-th value: make those all zero, the rest spread wide.
  std::vector<double> periodic = normal(n, 5);
  const std::size_t stride = n / 1024;
  for (std::size_t i = 0; i < n; i += stride) periodic[i] = 0.0;
  expect_as_numpy(periodic, 5.0, 95.0, "every sampled value zero");

  // Every sampled value far above the true 5th percentile: the low tail taken is most of the
  // tensor (slow, still exact).
  std::vector<double> biased = normal(n, 9);
  for (std::size_t i = 0; i < n; i += stride) biased[i] = 1.0 + static_cast<double>(i);
  expect_as_numpy(biased, 5.0, 95.0, "every sampled value large");
}

}  // namespace
}  // namespace rulestream
