// combine_reductions against compute_reductions of the concatenated elements: the combined
// figures of a tensor split across workers must be the figures of the whole tensor.
#include "stages/reduce/reduction_combiner.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "stages/reduce/reductions.hpp"

namespace rulestream {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

template <typename T>
TensorValue tensor_of(DType dtype, const std::vector<T>& values) {
  return TensorValue::from_values(dtype, Shape{static_cast<std::int64_t>(values.size())}, values);
}

// Splits `values` at `sizes` (which must add up to its size) into parts as workers would save
// them, each with the reductions compute_reductions gives it.
template <typename T>
std::vector<WorkerReductions> split(DType dtype, const std::vector<T>& values,
                                    const std::vector<std::size_t>& sizes) {
  std::vector<WorkerReductions> parts;
  std::size_t at = 0;
  for (const std::size_t size : sizes) {
    const std::vector<T> slice(values.begin() + static_cast<std::ptrdiff_t>(at),
                               values.begin() + static_cast<std::ptrdiff_t>(at + size));
    parts.push_back(
        {compute_reductions(tensor_of(dtype, slice)), static_cast<std::int64_t>(size), dtype});
    at += size;
  }
  EXPECT_EQ(at, values.size()) << "the test's sizes do not cover the values";
  return parts;
}

// Every figure: present in both or neither, same dtype, same value within `relative` (exact for
// integer dtypes, NaN only against NaN).
void expect_same(const ReductionSet& combined, const ReductionSet& direct, double relative) {
  for (int index = 0; index < kReductionKeyCount; ++index) {
    const ReductionKey key = ReductionKey::from_index(index);
    const std::string name = reduction_key_name(key);
    const auto& ours = combined.get(key);
    const auto& expected = direct.get(key);
    ASSERT_EQ(ours.has_value(), expected.has_value()) << name;
    if (!expected) continue;
    EXPECT_EQ(ours->dtype(), expected->dtype()) << name;
    if (!is_floating(expected->dtype())) {
      EXPECT_EQ(*ours, *expected) << name;
      continue;
    }
    const double a = ours->as_double();
    const double b = expected->as_double();
    if (std::isnan(b)) {
      EXPECT_TRUE(std::isnan(a)) << name << ": " << a;
    } else if (std::isinf(b)) {
      EXPECT_EQ(a, b) << name;
    } else {
      EXPECT_LE(std::fabs(a - b), relative * std::fabs(b)) << name << ": " << a << " vs " << b;
    }
  }
}

std::vector<double> random_doubles(std::mt19937_64& rng, std::size_t count, double mean,
                                   double spread) {
  std::normal_distribution<double> normal(mean, spread);
  std::vector<double> values(count);
  for (double& value : values) value = normal(rng);
  return values;
}

TEST(CombineReductions, Float64PartsOfDifferentSizesGiveTheWholeTensorsFigures) {
  std::mt19937_64 rng(20240611);
  const std::vector<std::vector<std::size_t>> splits = {
      {1000, 1}, {1, 17, 300, 682}, {333, 333, 334}, {999, 1}, {500, 0, 500}};
  // A mean far from zero makes naive variance formulas cancel; values near 1 keep prod finite.
  const std::vector<std::pair<double, double>> shapes = {
      {0.0, 1.0}, {1e3, 0.5}, {1.0, 1e-3}, {-5.0, 20.0}};
  for (const auto& [mean, spread] : shapes) {
    const std::vector<double> values = random_doubles(rng, 1001, mean, spread);
    for (const auto& sizes : splits) {
      std::vector<std::size_t> fitted = sizes;
      std::size_t total = 0;
      for (const std::size_t size : fitted) total += size;
      fitted.back() += values.size() - total;
      SCOPED_TRACE("mean " + std::to_string(mean) + ", " + std::to_string(fitted.size()) +
                   " parts");
      expect_same(combine_reductions(split(DType::Float64, values, fitted)),
                  compute_reductions(tensor_of(DType::Float64, values)), 1e-12);
    }
  }
}

TEST(CombineReductions, SinglePartIsItself) {
  std::mt19937_64 rng(7);
  const std::vector<double> values = random_doubles(rng, 257, 3.0, 2.0);
  const auto parts = split(DType::Float64, values, {values.size()});
  expect_same(combine_reductions(parts), parts.front().reductions, 0.0);
}

TEST(CombineReductions, ZeroPartsHaveNoFigures) {
  const ReductionSet combined = combine_reductions({});
  for (int index = 0; index < kReductionKeyCount; ++index) {
    EXPECT_FALSE(combined.get(ReductionKey::from_index(index)).has_value()) << index;
  }
}

TEST(CombineReductions, AConstantTensorSplitKeepsAVarianceOfExactlyZero) {
  // Weights 1/10, 1/10, 8/10 do not add up to exactly 1 in double: a plain weighted mean of
  // 0.75 comes out a hair off, and the variance with it.
  const std::vector<double> values(10, 0.75);
  const ReductionSet combined = combine_reductions(split(DType::Float64, values, {1, 1, 8}));
  EXPECT_EQ(combined.get({Reduction::Mean})->as_double(), 0.75);
  EXPECT_EQ(combined.get({Reduction::Variance})->as_double(), 0.0);
  EXPECT_EQ(combined.get({Reduction::Std})->as_double(), 0.0);
  EXPECT_EQ(combined.get({Reduction::Variance, true})->as_double(), 0.0);
  const std::vector<std::int16_t> integers(10, -3);
  const ReductionSet integer = combine_reductions(split(DType::Int16, integers, {1, 1, 8}));
  EXPECT_EQ(integer.get({Reduction::Mean})->as_double(), -3.0);
  EXPECT_EQ(integer.get({Reduction::Variance})->as_double(), 0.0);
}

TEST(CombineReductions, ANaNInOnePartMakesEveryFigureNaN) {
  std::mt19937_64 rng(11);
  std::vector<double> values = random_doubles(rng, 100, 0.0, 1.0);
  values[70] = kNaN;
  const auto direct = compute_reductions(tensor_of(DType::Float64, values));
  const ReductionSet combined = combine_reductions(split(DType::Float64, values, {60, 40}));
  expect_same(combined, direct, 0.0);
  for (int index = 0; index < kReductionKeyCount; ++index) {
    EXPECT_TRUE(std::isnan(combined.get(ReductionKey::from_index(index))->as_double())) << index;
  }
}

TEST(CombineReductions, InfinitiesFollowIeeeAsTheWholeTensorDoes) {
  const std::vector<double> values = {1.0, -2.0, kInf, 4.0, 0.5, -kInf, 3.0};
  // [1, -2, inf] and [4, 0.5, -inf, 3]: mean NaN, variance NaN, l2 inf, min -inf.
  expect_same(combine_reductions(split(DType::Float64, values, {3, 4})),
              compute_reductions(tensor_of(DType::Float64, values)), 1e-15);
  const std::vector<double> positive = {1.0, 2.0, kInf, 4.0};  // mean inf, variance NaN
  const ReductionSet combined = combine_reductions(split(DType::Float64, positive, {1, 3}));
  EXPECT_EQ(combined.get({Reduction::Mean})->as_double(), kInf);
  EXPECT_TRUE(std::isnan(combined.get({Reduction::Variance})->as_double()));
  expect_same(combined, compute_reductions(tensor_of(DType::Float64, positive)), 1e-15);
}

TEST(CombineReductions, HugeFloat64NormsDoNotOverflow) {
  const std::vector<double> values = {3e200, -4e200, 1e200, 2e200, -1e200};
  // sum of squares overflows double; the whole tensor's l2 (recovered by scaling) is finite.
  expect_same(combine_reductions(split(DType::Float64, values, {2, 3})),
              compute_reductions(tensor_of(DType::Float64, values)), 1e-14);
}

TEST(CombineReductions, Float32KeepsItsDtype) {
  std::mt19937_64 rng(3);
  std::vector<float> values;
  for (const double value : random_doubles(rng, 400, 0.5, 1.0)) {
    values.push_back(static_cast<float>(value));
  }
  // Each part's figures are already rounded to float32, so only float32 accuracy is owed.
  expect_same(combine_reductions(split(DType::Float32, values, {100, 250, 50})),
              compute_reductions(tensor_of(DType::Float32, values)), 1e-5);
}

TEST(CombineReductions, IntegerExtremesSumsAndProductsAreExact) {
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<std::int32_t> digits(-1000, 1000);
  std::vector<std::int32_t> values(600);
  for (auto& value : values) value = digits(rng);
  const auto direct = compute_reductions(tensor_of(DType::Int32, values));
  const ReductionSet combined = combine_reductions(split(DType::Int32, values, {1, 299, 300}));
  expect_same(combined, direct, 1e-12);
  EXPECT_EQ(combined.get({Reduction::Min})->dtype(), DType::Int32);
  EXPECT_EQ(combined.get({Reduction::Sum})->dtype(), DType::Int64);
  EXPECT_EQ(combined.get({Reduction::Mean})->dtype(), DType::Float64);
  // The product of 600 such numbers leaves int64: float64, as for the whole tensor.
  EXPECT_EQ(combined.get({Reduction::Prod})->dtype(), DType::Float64);

  const std::vector<std::int32_t> small = {2, -3, 5, 7, -1, 4};
  expect_same(combine_reductions(split(DType::Int32, small, {2, 4})),
              compute_reductions(tensor_of(DType::Int32, small)), 1e-15);
  EXPECT_EQ(combine_reductions(split(DType::Int32, small, {2, 4})).get({Reduction::Prod})->as_int(),
            840);
}

TEST(CombineReductions, AZeroFactorMakesAnOverflowedProductExactlyZero) {
  // The first part's product leaves int64 (float64); the second holds a 0.
  const std::vector<std::int64_t> values = {std::int64_t{1} << 40, std::int64_t{1} << 40, 3, 0};
  const ReductionSet combined = combine_reductions(split(DType::Int64, values, {2, 2}));
  EXPECT_EQ(*combined.get({Reduction::Prod}), Scalar::of_int(DType::Int64, 0));
  expect_same(combined, compute_reductions(tensor_of(DType::Int64, values)), 1e-15);
}

TEST(CombineReductions, IntegerSumsBeyondInt64BecomeFloat64) {
  const std::int64_t big = std::numeric_limits<std::int64_t>::max() - 10;
  const std::vector<std::int64_t> values = {big, 5, big, 5};
  const ReductionSet combined = combine_reductions(split(DType::Int64, values, {2, 2}));
  EXPECT_EQ(combined.get({Reduction::Sum})->dtype(), DType::Float64);
  expect_same(combined, compute_reductions(tensor_of(DType::Int64, values)), 1e-15);
}

TEST(CombineReductions, Int8AbsoluteExtremeBeyondTheDtype) {
  // |-128| does not fit int8: that part's abs_max is float64 128 and wins against int8 127.
  const std::vector<std::int8_t> values = {127, 3, -128, -4, 0};
  expect_same(combine_reductions(split(DType::Int8, values, {2, 3})),
              compute_reductions(tensor_of(DType::Int8, values)), 1e-15);
}

TEST(CombineReductions, UnsignedAndBool) {
  const std::vector<std::uint64_t> unsigned_values = {std::uint64_t{1} << 63, 7, 1, 2};
  expect_same(combine_reductions(split(DType::UInt64, unsigned_values, {1, 3})),
              compute_reductions(tensor_of(DType::UInt64, unsigned_values)), 1e-15);
  const std::vector<std::uint8_t> bools = {1, 0, 1, 1, 0, 1};
  const ReductionSet combined = combine_reductions(split(DType::Bool, bools, {2, 4}));
  expect_same(combined, compute_reductions(tensor_of(DType::Bool, bools)), 1e-15);
  EXPECT_EQ(*combined.get({Reduction::Max}), Scalar::of_bool(true));
  EXPECT_EQ(*combined.get({Reduction::Sum}), Scalar::of_int(DType::Int64, 4));
}

TEST(CombineReductions, EmptyPartsAddNothing) {
  const std::vector<double> values = {1.5, -2.0, 4.0};
  expect_same(combine_reductions(split(DType::Float64, values, {0, 3, 0})),
              compute_reductions(tensor_of(DType::Float64, values)), 1e-15);
  // Nothing but empty parts: an empty tensor's figures (no min/max, NaN mean).
  expect_same(combine_reductions(split(DType::Float64, std::vector<double>{}, {0, 0})),
              compute_reductions(tensor_of(DType::Float64, std::vector<double>{})), 0.0);
  expect_same(combine_reductions(split(DType::Int16, std::vector<std::int16_t>{}, {0, 0})),
              compute_reductions(tensor_of(DType::Int16, std::vector<std::int16_t>{})), 0.0);
}

TEST(CombineReductions, AFigureMissingInOnePartIsMissing) {
  const std::vector<double> values = {1.0, 2.0, 3.0, 4.0, 5.0};
  auto parts = split(DType::Float64, values, {2, 3});
  ReductionSet partial;  // the second worker saved only max and abs_mean
  partial.set({Reduction::Max}, *parts[1].reductions.get({Reduction::Max}));
  partial.set({Reduction::Mean, true}, *parts[1].reductions.get({Reduction::Mean, true}));
  parts[1].reductions = partial;
  const ReductionSet combined = combine_reductions(parts);
  EXPECT_EQ(combined.get({Reduction::Max})->as_double(), 5.0);
  EXPECT_DOUBLE_EQ(combined.get({Reduction::Mean, true})->as_double(), 3.0);
  EXPECT_FALSE(combined.get({Reduction::Min}).has_value());
  EXPECT_FALSE(combined.get({Reduction::Mean}).has_value());
  EXPECT_FALSE(combined.get({Reduction::Sum}).has_value());
  EXPECT_FALSE(combined.get({Reduction::L2}).has_value());
  // abs_mean alone does not give abs_variance.
  EXPECT_FALSE(combined.get({Reduction::Variance, true}).has_value());
}

TEST(CombineReductions, VarianceFromAPartsStdWhenItHasNoVariance) {
  const std::vector<double> values = {1.0, 2.0, 3.0, 4.0, 5.0, 9.0};
  auto parts = split(DType::Float64, values, {4, 2});
  ReductionSet without_variance;
  for (int index = 0; index < kReductionKeyCount; ++index) {
    const ReductionKey key = ReductionKey::from_index(index);
    if (key.reduction != Reduction::Variance) {
      without_variance.set(key, *parts[0].reductions.get(key));
    }
  }
  parts[0].reductions = without_variance;
  expect_same(combine_reductions(parts), compute_reductions(tensor_of(DType::Float64, values)),
              1e-14);
}

TEST(CombineReductions, AnUnknownCountLosesOnlyTheFiguresThatNeedIt) {
  const std::vector<double> values = {1.0, -2.0, 3.0, 4.0};
  auto parts = split(DType::Float64, values, {1, 3});
  parts[1].count.reset();
  const ReductionSet combined = combine_reductions(parts);
  const ReductionSet direct = compute_reductions(tensor_of(DType::Float64, values));
  for (const Reduction reduction : kAllReductions) {
    for (const bool abs : {false, true}) {
      const ReductionKey key{reduction, abs};
      const bool needs_count = reduction == Reduction::Mean || reduction == Reduction::Std ||
                               reduction == Reduction::Variance;
      ASSERT_EQ(combined.get(key).has_value(), !needs_count) << reduction_key_name(key);
      if (!needs_count) {
        EXPECT_DOUBLE_EQ(combined.get(key)->as_double(), direct.get(key)->as_double())
            << reduction_key_name(key);
      }
    }
  }
}

TEST(CombineReductions, StringsHaveNoFigures) {
  const TensorValue text(Shape{2}, {"a", "b"});
  const ReductionSet combined = combine_reductions(
      {{compute_reductions(text), 2, DType::String}, {compute_reductions(text), 2, DType::String}});
  for (int index = 0; index < kReductionKeyCount; ++index) {
    EXPECT_FALSE(combined.get(ReductionKey::from_index(index)).has_value()) << index;
  }
}

TEST(CombineReductions, RejectsMixedDtypesAndNegativeCounts) {
  const auto a = split(DType::Float64, std::vector<double>{1.0}, {1});
  const auto b = split(DType::Float32, std::vector<float>{1.0f}, {1});
  try {
    combine_reductions({a[0], b[0]});
    FAIL() << "mixed dtypes were combined";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("float64 and float32"), std::string::npos)
        << error.what();
  }
  auto negative = a;
  negative[0].count = -1;
  EXPECT_THROW(combine_reductions(negative), std::invalid_argument);
}

}  // namespace
}  // namespace rulestream
