// numpy.allclose for whole values, and the prefilter on reductions that spares reading values
// when they certainly differ.

#include "rules/support/value_closeness.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "stages/reduce/reductions.hpp"

namespace rulestream {
namespace {

TensorValue f32(std::vector<float> values) {
  const auto n = static_cast<std::int64_t>(values.size());
  return TensorValue::from_values<float>(DType::Float32, {n}, values);
}

TEST(ValueClosenessTest, FollowsNumpyAllclose) {
  const Tolerance tolerance;  // rtol 1e-5, atol 1e-8
  EXPECT_TRUE(compare_values(f32({1.0f, 2.0f}), f32({1.0f, 2.0f}), tolerance).close());
  EXPECT_TRUE(compare_values(f32({1.000001f}), f32({1.0f}), tolerance).close());
  EXPECT_FALSE(compare_values(f32({1.001f}), f32({1.0f}), tolerance).close());
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(compare_values(f32({inf}), f32({inf}), tolerance).close());
  EXPECT_FALSE(compare_values(f32({inf}), f32({-inf}), tolerance).close());
  EXPECT_FALSE(compare_values(f32({nan}), f32({nan}), tolerance).close());
  EXPECT_TRUE(compare_values(f32({nan}), f32({nan}), {.equal_nan = true}).close());
  EXPECT_FALSE(compare_values(f32({1.0f}), f32({1.0f, 1.0f}), tolerance).same_shape);
  // Mixed dtypes compare as numbers.
  const auto f64 = TensorValue::from_values<double>(DType::Float64, {2}, {1.0, 2.0});
  EXPECT_TRUE(compare_values(f64, f32({1.0f, 2.0f}), tolerance).close());
}

TEST(ValueClosenessTest, IdenticalBytesAreCloseWithNoDifference) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto value = f32({1.0f, nan, -3.0f});
  const Closeness with_equal_nan = compare_values(value, value, {.equal_nan = true});
  EXPECT_TRUE(with_equal_nan.close());
  EXPECT_EQ(with_equal_nan.max_abs_difference, 0.0);
  // numpy.allclose: without equal_nan, NaN is not close even to the same NaN.
  const Closeness without = compare_values(value, value, {});
  EXPECT_FALSE(without.close());
  EXPECT_EQ(without.differing, 1);
}

// close_within is compare_values's verdict and largest difference, whichever block differs.
TEST(ValueClosenessTest, CloseWithinAgreesWithCompareValues) {
  const Tolerance tolerance;
  std::vector<float> base(1000);
  for (std::size_t i = 0; i < base.size(); ++i) base[i] = static_cast<float>(i) * 0.5f - 100.0f;
  std::vector<float> nudged = base;
  for (std::size_t i = 0; i < nudged.size(); i += 7) nudged[i] *= 1.000001f;
  const auto close = close_within(f32(nudged), f32(base), tolerance);
  ASSERT_TRUE(close.has_value());
  EXPECT_EQ(*close, compare_values(f32(nudged), f32(base), tolerance).max_abs_difference);
  EXPECT_GT(*close, 0.0);
  // One element out of tolerance, in the first block, in a middle one, in the last element.
  for (const std::size_t at : {std::size_t{0}, std::size_t{300}, base.size() - 1}) {
    std::vector<float> moved = nudged;
    moved[at] += 1.0f;
    EXPECT_FALSE(compare_values(f32(moved), f32(base), tolerance).close());
    EXPECT_FALSE(close_within(f32(moved), f32(base), tolerance).has_value()) << at;
  }
  EXPECT_FALSE(close_within(f32({1.0f}), f32({1.0f, 1.0f}), tolerance).has_value());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(close_within(f32({nan}), f32({nan}), tolerance).has_value());
  EXPECT_EQ(close_within(f32({nan, 2.0f}), f32({nan, 2.5f}), {.atol = 1.0, .equal_nan = true})
                .value_or(-1.0),
            0.5);
}

TEST(ValueClosenessTest, PrefilterRejectsValuesWhoseSumsMoved) {
  const Tolerance tolerance;
  const auto a = compute_reductions(f32({0.5f, -0.25f, 0.125f}));
  const auto b = compute_reductions(f32({0.5f, -0.25f, 0.126f}));
  EXPECT_FALSE(may_be_close(close_screen(a), close_screen(b), tolerance));
  EXPECT_TRUE(may_be_close(close_screen(a), close_screen(a), tolerance));
  EXPECT_FALSE(may_be_close(close_screen(a), close_screen(compute_reductions(f32({0.5f, -0.25f}))),
                            tolerance));
  // NaN and Inf leave the decision to the values.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(may_be_close(close_screen(compute_reductions(f32({nan, 1.0f, 7.0f}))),
                           close_screen(b), tolerance));
}

// Values that moved together in proportion keep their sum within allclose's bound while their
// magnitudes leave it: the l1 norms tell (weights scaled a little at each step, as weight decay
// scales them). Scaled by less than rtol, they are close and pass.
TEST(ValueClosenessTest, PrefilterRejectsValuesScaledPastTheTolerance) {
  const Tolerance tolerance;
  std::vector<float> b;
  for (int i = 0; i < 256; ++i) b.push_back(i % 2 == 0 ? 0.25f + 0.001f * i : -0.25f - 0.001f * i);
  const auto scaled = [&](double factor) {
    std::vector<float> a;
    for (const float x : b) a.push_back(static_cast<float>(x * factor));
    return f32(a);
  };
  const auto rb = compute_reductions(f32(b));
  const auto sum_moved =
      std::fabs(compute_reductions(scaled(1.001)).get({Reduction::Sum, false})->as_double() -
                rb.get({Reduction::Sum, false})->as_double());
  const double sum_bound =
      256 * tolerance.atol + tolerance.rtol * rb.get({Reduction::L1, false})->as_double();
  ASSERT_LT(sum_moved, sum_bound) << "the sums alone cannot tell";
  EXPECT_FALSE(
      may_be_close(close_screen(compute_reductions(scaled(1.001))), close_screen(rb), tolerance));
  EXPECT_FALSE(compare_values(scaled(1.001), f32(b), tolerance).close());
  EXPECT_TRUE(may_be_close(close_screen(compute_reductions(scaled(1.000001))), close_screen(rb),
                           tolerance));
  EXPECT_TRUE(compare_values(scaled(1.000001), f32(b), tolerance).close());
}

// Sound: whenever the prefilter says "certainly not close", the values are not close. Checked on
// pairs made to sit right at the tolerance (the hardest cases), in float32 and float64.
template <typename T>
void expect_prefilter_is_sound(DType dtype) {
  std::mt19937_64 random(42);
  std::normal_distribution<double> normal;
  const Tolerance tolerance;
  int rejected = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const std::size_t n = 1 + static_cast<std::size_t>(random() % 300);
    std::vector<T> a(n), b(n);
    const double scale = std::pow(10.0, static_cast<double>(random() % 9) - 4.0);
    // Each element moved by up to about 1.5x what allclose allows for it, all in one direction,
    // at random, or away from zero in proportion (scaled): some pairs are close, some are not,
    // many by a hair.
    const int kind = static_cast<int>(random() % 3);
    const double common = 1.5 * std::uniform_real_distribution<double>(0.0, 1.0)(random);
    for (std::size_t i = 0; i < n; ++i) {
      b[i] = static_cast<T>(normal(random) * scale);
      const double allowed = tolerance.atol + tolerance.rtol * std::fabs(static_cast<double>(b[i]));
      const double fraction =
          kind == 0 ? 1.5 * std::uniform_real_distribution<double>(0.0, 1.0)(random)
          : kind == 1
              ? normal(random) * 1.5 * std::uniform_real_distribution<double>(0.0, 1.0)(random)
              : (b[i] < 0 ? -common : common);
      a[i] = static_cast<T>(static_cast<double>(b[i]) + fraction * allowed);
    }
    const auto ta = TensorValue::from_values<T>(dtype, {static_cast<std::int64_t>(n)}, a);
    const auto tb = TensorValue::from_values<T>(dtype, {static_cast<std::int64_t>(n)}, b);
    if (!may_be_close(close_screen(compute_reductions(ta)), close_screen(compute_reductions(tb)),
                      tolerance)) {
      ++rejected;
      EXPECT_FALSE(compare_values(ta, tb, tolerance).close()) << "n " << n << " scale " << scale;
    }
  }
  EXPECT_GT(rejected, 0);  // the filter does reject something
}

TEST(ValueClosenessTest, PrefilterNeverRejectsCloseValues) {
  expect_prefilter_is_sound<float>(DType::Float32);
  expect_prefilter_is_sound<double>(DType::Float64);
}

}  // namespace
}  // namespace rulestream
