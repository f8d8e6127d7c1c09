#include "stages/reduce/reductions.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/model/exceptions.hpp"
#include "core/model/half.hpp"

namespace rulestream {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

constexpr DType kFloatingDTypes[] = {DType::Float16, DType::BFloat16, DType::Float32,
                                     DType::Float64};
constexpr DType kSignedDTypes[] = {DType::Int8, DType::Int16, DType::Int32, DType::Int64};
constexpr DType kUnsignedDTypes[] = {DType::UInt8, DType::UInt16, DType::UInt32, DType::UInt64};
constexpr DType kRealDTypes[] = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64,
                                 DType::Int8,    DType::Int16,    DType::Int32,   DType::Int64,
                                 DType::UInt8,   DType::UInt16,   DType::UInt32,  DType::UInt64,
                                 DType::Bool};

// A tensor over `bytes` placed `misalign` bytes past an allocation boundary, as tensor content
// sits at any offset inside a protobuf record.
TensorValue tensor_over(DType dtype, const std::vector<std::byte>& bytes, Shape shape,
                        std::size_t misalign) {
  auto storage = std::make_shared<std::vector<std::byte>>(bytes.size() + misalign + 8);
  if (!bytes.empty()) std::memcpy(storage->data() + misalign, bytes.data(), bytes.size());
  const std::span<const std::byte> span(storage->data() + misalign, bytes.size());
  return TensorValue(dtype, std::move(shape), SharedBytes(storage, span));
}

template <typename T>
void append(std::vector<std::byte>& bytes, T value) {
  const auto at = bytes.size();
  bytes.resize(at + sizeof(T));
  std::memcpy(bytes.data() + at, &value, sizeof(T));
}

Shape vector_shape(std::size_t count) {
  return Shape{static_cast<std::int64_t>(count)};
}

// Floating tensor of any floating dtype; values must be representable (they are rounded).
TensorValue floats(DType dtype, const std::vector<double>& values, std::size_t misalign = 0,
                   std::optional<Shape> shape = std::nullopt) {
  std::vector<std::byte> bytes;
  for (const double value : values) {
    switch (dtype) {
      case DType::Float16:
        append(bytes, double_to_float16(value));
        break;
      case DType::BFloat16:
        append(bytes, float_to_bfloat16(static_cast<float>(value)));
        break;
      case DType::Float32:
        append(bytes, static_cast<float>(value));
        break;
      default:
        append(bytes, value);
    }
  }
  return tensor_over(dtype, bytes, shape.value_or(vector_shape(values.size())), misalign);
}

// Integer or bool tensor of any such dtype from values that fit it.
TensorValue integers(DType dtype, const std::vector<std::int64_t>& values, std::size_t misalign = 0,
                     std::optional<Shape> shape = std::nullopt) {
  std::vector<std::byte> bytes;
  for (const std::int64_t value : values) {
    // Little-endian: the low bytes of the int64 are the element.
    std::byte raw[8];
    std::memcpy(raw, &value, 8);
    bytes.insert(bytes.end(), raw, raw + dtype_size(dtype));
  }
  return tensor_over(dtype, bytes, shape.value_or(vector_shape(values.size())), misalign);
}

template <typename T>
TensorValue typed(DType dtype, const std::vector<T>& values, std::size_t misalign = 0) {
  std::vector<std::byte> bytes;
  for (const T value : values) append(bytes, value);
  return tensor_over(dtype, bytes, vector_shape(values.size()), misalign);
}

std::string describe(const Scalar& scalar) {
  std::ostringstream out;
  out.precision(17);
  out << dtype_name(scalar.dtype()) << " ";
  if (is_signed_integer(scalar.dtype())) {
    out << scalar.as_int();
  } else if (is_unsigned_integer(scalar.dtype()) || scalar.dtype() == DType::Bool) {
    out << scalar.as_uint();
  } else {
    out << scalar.as_double();
  }
  return out.str();
}

// Equal dtype and value, NaN matching NaN.
::testing::AssertionResult same(const std::optional<Scalar>& actual, const Scalar& expected) {
  if (!actual) return ::testing::AssertionFailure() << "absent, expected " << describe(expected);
  const bool both_nan = is_floating(actual->dtype()) && actual->dtype() == expected.dtype() &&
                        std::isnan(actual->as_double()) && std::isnan(expected.as_double());
  if (both_nan || *actual == expected) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << describe(*actual) << ", expected " << describe(expected);
}

std::optional<Scalar> get(const ReductionSet& set, std::string_view name) {
  const auto key = reduction_key_from_name(name);
  if (!key) throw std::invalid_argument(std::string(name));
  return set.get(*key);
}

Scalar f64(double value) {
  return Scalar::of_double(DType::Float64, value);
}
Scalar i64(std::int64_t value) {
  return Scalar::of_int(DType::Int64, value);
}
Scalar u64(std::uint64_t value) {
  return Scalar::of_uint(DType::UInt64, value);
}

std::vector<std::string> all_key_names() {
  std::vector<std::string> names;
  for (int i = 0; i < kReductionKeyCount; ++i) {
    names.push_back(reduction_key_name(ReductionKey::from_index(i)));
  }
  return names;
}

// ---- hand-computed values, every dtype -----------------------------------------------------

TEST(ReductionsTest, FloatingValuesKeepTheirDtype) {
  // x = [1, -2, 3, -4]: mean -0.5, deviations +-1.5 and +-3.5, variance 29/4.
  // |x| = [1, 2, 3, 4]: mean 2.5, variance 5/4.
  for (const DType dtype : kFloatingDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const auto set = compute_reductions(floats(dtype, {1, -2, 3, -4}));
    const auto r = [&](double value) { return Scalar::of_double(dtype, value); };
    EXPECT_TRUE(same(get(set, "min"), r(-4)));
    EXPECT_TRUE(same(get(set, "max"), r(3)));
    EXPECT_TRUE(same(get(set, "mean"), r(-0.5)));
    EXPECT_TRUE(same(get(set, "prod"), r(24)));
    EXPECT_TRUE(same(get(set, "sum"), r(-2)));
    EXPECT_TRUE(same(get(set, "variance"), r(7.25)));
    EXPECT_TRUE(same(get(set, "std"), r(std::sqrt(7.25))));
    EXPECT_TRUE(same(get(set, "l1"), r(10)));
    EXPECT_TRUE(same(get(set, "l2"), r(std::sqrt(30.0))));
    EXPECT_TRUE(same(get(set, "abs_min"), r(1)));
    EXPECT_TRUE(same(get(set, "abs_max"), r(4)));
    EXPECT_TRUE(same(get(set, "abs_mean"), r(2.5)));
    EXPECT_TRUE(same(get(set, "abs_prod"), r(24)));
    EXPECT_TRUE(same(get(set, "abs_sum"), r(10)));
    EXPECT_TRUE(same(get(set, "abs_variance"), r(1.25)));
    EXPECT_TRUE(same(get(set, "abs_std"), r(std::sqrt(1.25))));
    EXPECT_TRUE(same(get(set, "abs_l1"), r(10)));
    EXPECT_TRUE(same(get(set, "abs_l2"), r(std::sqrt(30.0))));
  }
}

TEST(ReductionsTest, SignedIntegers) {
  for (const DType dtype : kSignedDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const auto set = compute_reductions(integers(dtype, {1, -2, 3, -4}));
    EXPECT_TRUE(same(get(set, "min"), Scalar::of_int(dtype, -4)));
    EXPECT_TRUE(same(get(set, "max"), Scalar::of_int(dtype, 3)));
    EXPECT_TRUE(same(get(set, "mean"), f64(-0.5)));
    EXPECT_TRUE(same(get(set, "prod"), i64(24)));
    EXPECT_TRUE(same(get(set, "sum"), i64(-2)));
    EXPECT_TRUE(same(get(set, "variance"), f64(7.25)));
    EXPECT_TRUE(same(get(set, "std"), f64(std::sqrt(7.25))));
    EXPECT_TRUE(same(get(set, "l1"), f64(10)));
    EXPECT_TRUE(same(get(set, "l2"), f64(std::sqrt(30.0))));
    EXPECT_TRUE(same(get(set, "abs_min"), Scalar::of_int(dtype, 1)));
    EXPECT_TRUE(same(get(set, "abs_max"), Scalar::of_int(dtype, 4)));
    EXPECT_TRUE(same(get(set, "abs_mean"), f64(2.5)));
    EXPECT_TRUE(same(get(set, "abs_prod"), i64(24)));
    EXPECT_TRUE(same(get(set, "abs_sum"), i64(10)));
    EXPECT_TRUE(same(get(set, "abs_variance"), f64(1.25)));
    EXPECT_TRUE(same(get(set, "abs_std"), f64(std::sqrt(1.25))));
    EXPECT_TRUE(same(get(set, "abs_l1"), f64(10)));
    EXPECT_TRUE(same(get(set, "abs_l2"), f64(std::sqrt(30.0))));
  }
}

TEST(ReductionsTest, NegativeProductOfSignedIntegers) {
  const auto set = compute_reductions(integers(DType::Int16, {-3, 5, 7}));
  EXPECT_TRUE(same(get(set, "prod"), i64(-105)));
  EXPECT_TRUE(same(get(set, "abs_prod"), i64(105)));
  EXPECT_TRUE(same(get(set, "sum"), i64(9)));
  EXPECT_TRUE(same(get(set, "abs_sum"), i64(15)));
}

TEST(ReductionsTest, UnsignedIntegersAreTheirOwnAbs) {
  for (const DType dtype : kUnsignedDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const auto set = compute_reductions(integers(dtype, {3, 1, 4, 2}));
    for (const char* prefix : {"", "abs_"}) {
      const std::string p = prefix;
      EXPECT_TRUE(same(get(set, p + "min"), Scalar::of_uint(dtype, 1)));
      EXPECT_TRUE(same(get(set, p + "max"), Scalar::of_uint(dtype, 4)));
      EXPECT_TRUE(same(get(set, p + "mean"), f64(2.5)));
      EXPECT_TRUE(same(get(set, p + "prod"), u64(24)));
      EXPECT_TRUE(same(get(set, p + "sum"), u64(10)));
      EXPECT_TRUE(same(get(set, p + "variance"), f64(1.25)));
      EXPECT_TRUE(same(get(set, p + "std"), f64(std::sqrt(1.25))));
      EXPECT_TRUE(same(get(set, p + "l1"), f64(10)));
      EXPECT_TRUE(same(get(set, p + "l2"), f64(std::sqrt(30.0))));
    }
  }
}

TEST(ReductionsTest, UnsignedValuesAboveTheSignedRange) {
  const auto set = compute_reductions(integers(DType::UInt8, {200, 255, 100}));
  EXPECT_TRUE(same(get(set, "min"), Scalar::of_uint(DType::UInt8, 100)));
  EXPECT_TRUE(same(get(set, "max"), Scalar::of_uint(DType::UInt8, 255)));
  EXPECT_TRUE(same(get(set, "sum"), u64(555)));
  EXPECT_TRUE(same(get(set, "prod"), u64(5100000)));
  const auto wide =
      compute_reductions(typed<std::uint32_t>(DType::UInt32, {4000000000u, 4000000000u, 1u}));
  EXPECT_TRUE(same(get(wide, "max"), Scalar::of_uint(DType::UInt32, 4000000000u)));
  EXPECT_TRUE(same(get(wide, "sum"), u64(8000000001ull)));
  EXPECT_TRUE(same(get(wide, "prod"), u64(16000000000000000000ull)));
  EXPECT_TRUE(same(get(wide, "mean"), f64(8000000001.0 / 3)));
}

TEST(ReductionsTest, Bool) {
  // Any non-zero byte is True, as numpy reads it.
  const auto set = compute_reductions(integers(DType::Bool, {1, 0, 2, 1}));
  for (const char* prefix : {"", "abs_"}) {
    const std::string p = prefix;
    EXPECT_TRUE(same(get(set, p + "min"), Scalar::of_bool(false)));
    EXPECT_TRUE(same(get(set, p + "max"), Scalar::of_bool(true)));
    EXPECT_TRUE(same(get(set, p + "sum"), i64(3)));
    EXPECT_TRUE(same(get(set, p + "prod"), i64(0)));
    EXPECT_TRUE(same(get(set, p + "mean"), f64(0.75)));
    EXPECT_TRUE(same(get(set, p + "variance"), f64(0.1875)));
    EXPECT_TRUE(same(get(set, p + "std"), f64(std::sqrt(0.1875))));
    EXPECT_TRUE(same(get(set, p + "l1"), f64(3)));
    EXPECT_TRUE(same(get(set, p + "l2"), f64(std::sqrt(3.0))));
  }
  const auto all_true = compute_reductions(integers(DType::Bool, {1, 1, 7}));
  EXPECT_TRUE(same(get(all_true, "prod"), i64(1)));
  EXPECT_TRUE(same(get(all_true, "min"), Scalar::of_bool(true)));
  const auto all_false = compute_reductions(integers(DType::Bool, {0, 0}));
  EXPECT_TRUE(same(get(all_false, "max"), Scalar::of_bool(false)));
  EXPECT_TRUE(same(get(all_false, "sum"), i64(0)));
}

// numpy's result dtypes, checked for every key of every dtype.
TEST(ReductionsTest, ResultDtypesFollowNumpy) {
  for (const DType dtype : kRealDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const auto set = compute_reductions(is_floating(dtype) ? floats(dtype, {1, 2, 3})
                                                           : integers(dtype, {1, 0, 1}));
    for (int i = 0; i < kReductionKeyCount; ++i) {
      const ReductionKey key = ReductionKey::from_index(i);
      SCOPED_TRACE(reduction_key_name(key));
      const auto& value = set.get(key);
      ASSERT_TRUE(value.has_value());
      DType expected = DType::Float64;
      if (is_floating(dtype)) {
        expected = dtype;
      } else if (key.reduction == Reduction::Min || key.reduction == Reduction::Max) {
        expected = dtype;
      } else if (key.reduction == Reduction::Sum || key.reduction == Reduction::Prod) {
        expected = is_unsigned_integer(dtype) ? DType::UInt64 : DType::Int64;
      }
      EXPECT_EQ(value->dtype(), expected);
    }
  }
}

// ---- NaN and Inf ---------------------------------------------------------------------------

TEST(ReductionsTest, NaNPropagatesEverywhere) {
  const std::vector<std::vector<double>> cases = {
      {1, kNaN, 3}, {kNaN, 1, 2}, {1, 2, kNaN}, {kNaN}, {-kNaN, kInf, -kInf}, {kInf, kNaN, 0}};
  for (const DType dtype : kFloatingDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    for (const auto& values : cases) {
      const auto set = compute_reductions(floats(dtype, values));
      for (const auto& name : all_key_names()) {
        SCOPED_TRACE(name);
        EXPECT_TRUE(same(get(set, name), Scalar::of_double(dtype, kNaN)));
      }
    }
  }
}

TEST(ReductionsTest, NaNInALargeTensorIsFoundInEveryChunk) {
  // NaN right after the first element, at a chunk boundary, or in the unvectorised tail.
  for (const std::size_t at : {std::size_t{1}, std::size_t{2048}, std::size_t{4100}}) {
    SCOPED_TRACE(at);
    std::vector<double> values(4101, 0.5);
    values[at] = kNaN;
    const auto set = compute_reductions(floats(DType::Float32, values));
    EXPECT_TRUE(std::isnan(get(set, "min")->as_double()));
    EXPECT_TRUE(std::isnan(get(set, "abs_max")->as_double()));
    EXPECT_TRUE(std::isnan(get(set, "mean")->as_double()));
    EXPECT_TRUE(std::isnan(get(set, "prod")->as_double()));
  }
}

TEST(ReductionsTest, InfinityFollowsIeee) {
  for (const DType dtype : kFloatingDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const auto r = [&](double value) { return Scalar::of_double(dtype, value); };

    const auto one_inf = compute_reductions(floats(dtype, {1, kInf}));
    EXPECT_TRUE(same(get(one_inf, "min"), r(1)));
    EXPECT_TRUE(same(get(one_inf, "max"), r(kInf)));
    EXPECT_TRUE(same(get(one_inf, "mean"), r(kInf)));
    EXPECT_TRUE(same(get(one_inf, "sum"), r(kInf)));
    EXPECT_TRUE(same(get(one_inf, "prod"), r(kInf)));
    EXPECT_TRUE(same(get(one_inf, "variance"), r(kNaN)));  // inf - mean(inf) is NaN
    EXPECT_TRUE(same(get(one_inf, "std"), r(kNaN)));
    EXPECT_TRUE(same(get(one_inf, "l1"), r(kInf)));
    EXPECT_TRUE(same(get(one_inf, "l2"), r(kInf)));

    const auto single = compute_reductions(floats(dtype, {-kInf}));
    EXPECT_TRUE(same(get(single, "variance"), r(kNaN)));
    EXPECT_TRUE(same(get(single, "abs_variance"), r(kNaN)));
    EXPECT_TRUE(same(get(single, "mean"), r(-kInf)));
    EXPECT_TRUE(same(get(single, "abs_mean"), r(kInf)));

    const auto both = compute_reductions(floats(dtype, {kInf, 2, -kInf}));
    EXPECT_TRUE(same(get(both, "min"), r(-kInf)));
    EXPECT_TRUE(same(get(both, "max"), r(kInf)));
    EXPECT_TRUE(same(get(both, "sum"), r(kNaN)));
    EXPECT_TRUE(same(get(both, "mean"), r(kNaN)));
    EXPECT_TRUE(same(get(both, "prod"), r(-kInf)));
    EXPECT_TRUE(same(get(both, "abs_min"), r(2)));
    EXPECT_TRUE(same(get(both, "abs_max"), r(kInf)));
    EXPECT_TRUE(same(get(both, "abs_sum"), r(kInf)));
    EXPECT_TRUE(same(get(both, "abs_prod"), r(kInf)));

    const auto inf_times_zero = compute_reductions(floats(dtype, {kInf, 0}));
    EXPECT_TRUE(same(get(inf_times_zero, "prod"), r(kNaN)));
  }
}

TEST(ReductionsTest, OverflowFollowsIeeeInTheDtype) {
  // float16 tops out at 65504: the sum and the l2 norm overflow, the mean does not.
  const auto half = compute_reductions(floats(DType::Float16, {65504, 65504}));
  EXPECT_TRUE(same(get(half, "sum"), Scalar::of_double(DType::Float16, kInf)));
  EXPECT_TRUE(same(get(half, "l2"), Scalar::of_double(DType::Float16, kInf)));
  EXPECT_TRUE(same(get(half, "mean"), Scalar::of_double(DType::Float16, 65504)));
  EXPECT_TRUE(same(get(half, "variance"), Scalar::of_double(DType::Float16, 0)));

  // float32 products overflow and underflow when rounded to float32 at the end.
  const auto big = compute_reductions(floats(DType::Float32, {1e30, 1e30}));
  EXPECT_TRUE(same(get(big, "prod"), Scalar::of_double(DType::Float32, kInf)));
  const auto tiny = compute_reductions(floats(DType::Float32, {1e-30, -1e-30}));
  EXPECT_TRUE(same(get(tiny, "prod"), Scalar::of_double(DType::Float32, -0.0)));
  // ... but not in between, as the product is carried in double.
  const auto balanced = compute_reductions(floats(DType::Float32, {1e30, 1e30, 1e-30, 1e-30}));
  EXPECT_NEAR(get(balanced, "prod")->as_double(), 1.0, 1e-6);
}

// Near the top of the float64 range, sums of squares (even plain sums) overflow double although
// the norm, mean or std are finite: those come out accurate (numpy's would be Inf), only the
// figures that really exceed float64 are Inf.
TEST(ReductionsTest, Float64FiguresSurviveOverflowingSums) {
  const auto huge = compute_reductions(floats(DType::Float64, {1e200, -1e200, 1e200, -1e200}));
  EXPECT_TRUE(same(get(huge, "variance"), f64(kInf)));  // 1e400
  EXPECT_NEAR(get(huge, "std")->as_double(), 1e200, 1e188);
  EXPECT_NEAR(get(huge, "l2")->as_double(), 2e200, 2e188);
  EXPECT_TRUE(same(get(huge, "mean"), f64(0)));
  EXPECT_TRUE(same(get(huge, "abs_variance"), f64(0)));
  EXPECT_NEAR(get(huge, "abs_std")->as_double(), 0, 1e188);
  EXPECT_NEAR(get(huge, "abs_mean")->as_double(), 1e200, 1e188);

  const double max = std::numeric_limits<double>::max();
  const auto top = compute_reductions(floats(DType::Float64, {max / 2, max / 4, max / 2}));
  EXPECT_TRUE(same(get(top, "sum"), f64(kInf)));  // 1.25 max
  EXPECT_TRUE(same(get(top, "l1"), f64(kInf)));
  EXPECT_NEAR(get(top, "mean")->as_double(), max / 12 * 5, max * 1e-12);
  EXPECT_NEAR(get(top, "abs_mean")->as_double(), max / 12 * 5, max * 1e-12);
  EXPECT_NEAR(get(top, "l2")->as_double(), 0.75 * max, max * 1e-12);
  EXPECT_TRUE(same(get(top, "prod"), f64(kInf)));
  // Deviations max/12, -2 max/12, max/12: variance 6/144 max^2 / 3.
  EXPECT_NEAR(get(top, "std")->as_double(), std::sqrt(2.0) / 12 * max, max * 1e-12);
  EXPECT_TRUE(same(get(top, "variance"), f64(kInf)));

  // Spread over chunks, with a small element that must not disturb the rest.
  std::vector<double> values(5000, 3e160);
  values[4999] = -1e-300;
  const auto spread = compute_reductions(floats(DType::Float64, values));
  EXPECT_NEAR(get(spread, "l2")->as_double(), std::sqrt(4999.0) * 3e160, 1e150);
  EXPECT_NEAR(get(spread, "std")->as_double(), std::sqrt(4999.0) / 5000 * 3e160, 1e150);
  EXPECT_TRUE(same(get(spread, "min"), f64(-1e-300)));
}

// ---- shapes: empty, 0-d --------------------------------------------------------------------

TEST(ReductionsTest, EmptyTensors) {
  for (const DType dtype : kRealDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    for (const Shape& shape : {Shape{0}, Shape{3, 0, 2}}) {
      const TensorValue empty =
          is_floating(dtype) ? floats(dtype, {}, 0, shape) : integers(dtype, {}, 0, shape);
      const auto set = compute_reductions(empty);
      const DType real = is_floating(dtype) ? dtype : DType::Float64;
      for (const char* prefix : {"", "abs_"}) {
        const std::string p = prefix;
        EXPECT_FALSE(get(set, p + "min").has_value());
        EXPECT_FALSE(get(set, p + "max").has_value());
        EXPECT_TRUE(same(get(set, p + "mean"), Scalar::of_double(real, kNaN)));
        EXPECT_TRUE(same(get(set, p + "std"), Scalar::of_double(real, kNaN)));
        EXPECT_TRUE(same(get(set, p + "variance"), Scalar::of_double(real, kNaN)));
        EXPECT_TRUE(same(get(set, p + "l1"), Scalar::of_double(real, 0)));
        EXPECT_TRUE(same(get(set, p + "l2"), Scalar::of_double(real, 0)));
        if (is_floating(dtype)) {
          EXPECT_TRUE(same(get(set, p + "sum"), Scalar::of_double(dtype, 0)));
          EXPECT_TRUE(same(get(set, p + "prod"), Scalar::of_double(dtype, 1)));
        } else if (is_unsigned_integer(dtype)) {
          EXPECT_TRUE(same(get(set, p + "sum"), u64(0)));
          EXPECT_TRUE(same(get(set, p + "prod"), u64(1)));
        } else {
          EXPECT_TRUE(same(get(set, p + "sum"), i64(0)));
          EXPECT_TRUE(same(get(set, p + "prod"), i64(1)));
        }
      }
      EXPECT_THROW(compute_reduction(empty, {Reduction::Min, false}), ReductionUnsupported);
      EXPECT_THROW(compute_reduction(empty, {Reduction::Max, true}), ReductionUnsupported);
      EXPECT_TRUE(
          same(compute_reduction(empty, {Reduction::L2, false}), Scalar::of_double(real, 0)));
    }
  }
}

TEST(ReductionsTest, EmptyMinMessageNamesTheDtype) {
  try {
    compute_reduction(floats(DType::Float32, {}), {Reduction::Min, true});
    FAIL() << "expected ReductionUnsupported";
  } catch (const ReductionUnsupported& error) {
    EXPECT_NE(std::string(error.what()).find("abs_min"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("empty float32"), std::string::npos) << error.what();
  }
}

TEST(ReductionsTest, ZeroDimensionalScalar) {
  const auto set = compute_reductions(floats(DType::Float32, {-2.5}, 0, Shape{}));
  const auto r = [](double value) { return Scalar::of_double(DType::Float32, value); };
  EXPECT_TRUE(same(get(set, "min"), r(-2.5)));
  EXPECT_TRUE(same(get(set, "max"), r(-2.5)));
  EXPECT_TRUE(same(get(set, "mean"), r(-2.5)));
  EXPECT_TRUE(same(get(set, "sum"), r(-2.5)));
  EXPECT_TRUE(same(get(set, "prod"), r(-2.5)));
  EXPECT_TRUE(same(get(set, "variance"), r(0)));
  EXPECT_TRUE(same(get(set, "std"), r(0)));
  EXPECT_TRUE(same(get(set, "l1"), r(2.5)));
  EXPECT_TRUE(same(get(set, "l2"), r(2.5)));
  EXPECT_TRUE(same(get(set, "abs_mean"), r(2.5)));
  const auto integer = compute_reductions(integers(DType::Int32, {-7}, 0, Shape{}));
  EXPECT_TRUE(same(get(integer, "min"), Scalar::of_int(DType::Int32, -7)));
  EXPECT_TRUE(same(get(integer, "abs_prod"), i64(7)));
  EXPECT_TRUE(same(get(integer, "variance"), f64(0)));
}

// l1/l2 are element-wise whatever the rank (not numpy's matrix norms for 2-D tensors).
TEST(ReductionsTest, NormsAreElementWiseForAnyRank) {
  const std::vector<double> values = {1, -2, 3, -4, 5, -6};
  for (const Shape& shape : {Shape{6}, Shape{2, 3}, Shape{1, 2, 3}}) {
    const auto set = compute_reductions(floats(DType::Float64, values, 0, shape));
    EXPECT_TRUE(same(get(set, "l1"), f64(21)));
    EXPECT_TRUE(same(get(set, "l2"), f64(std::sqrt(91.0))));
  }
}

// ---- constant tensors: variance exactly 0 --------------------------------------------------

TEST(ReductionsTest, ConstantTensorsHaveZeroVariance) {
  for (const DType dtype : kFloatingDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    for (const double value : {0.1, -1234.5678, 3e-3, 1e4 + 0.1}) {
      const auto set = compute_reductions(floats(dtype, std::vector<double>(10007, value)));
      for (const char* name : {"variance", "std", "abs_variance", "abs_std"}) {
        EXPECT_EQ(get(set, name)->as_double(), 0.0) << name << " of " << value;
      }
      const double stored = get(set, "min")->as_double();
      EXPECT_NEAR(get(set, "mean")->as_double(), stored, std::fabs(stored) * 1e-3);
    }
  }
  for (const DType dtype : {DType::Int8, DType::Int32, DType::Int64, DType::UInt16, DType::Bool}) {
    SCOPED_TRACE(dtype_name(dtype));
    const auto set = compute_reductions(integers(dtype, std::vector<std::int64_t>(5000, 1)));
    EXPECT_TRUE(same(get(set, "variance"), f64(0)));
    EXPECT_TRUE(same(get(set, "abs_std"), f64(0)));
    EXPECT_TRUE(same(get(set, "mean"), f64(1)));
  }
  // Alternating signs: the values vary, their absolute values do not.
  std::vector<double> alternating(999);
  for (std::size_t i = 0; i < alternating.size(); ++i) alternating[i] = i % 2 == 0 ? 0.3 : -0.3;
  const auto set = compute_reductions(floats(DType::Float64, alternating));
  EXPECT_EQ(get(set, "abs_variance")->as_double(), 0.0);
  EXPECT_GT(get(set, "variance")->as_double(), 0.08);
}

// ---- unaligned element bytes ---------------------------------------------------------------

TEST(ReductionsTest, UnalignedBytesGiveTheSameResults) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> uniform(-3, 3);
  std::vector<double> values(5003);  // crosses chunk boundaries, leaves a tail
  for (auto& value : values) value = std::round(uniform(rng) * 8) / 8;
  std::vector<std::int64_t> ints(values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    ints[i] = static_cast<std::int64_t>(values[i] * 8);
  for (const DType dtype : kRealDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    std::vector<std::int64_t> fitting = ints;
    if (is_unsigned_integer(dtype)) {
      for (auto& value : fitting) value = std::abs(value);
    }
    if (dtype == DType::Bool) {
      for (auto& value : fitting) value = value > 0 ? 1 : 0;
    }
    const auto make = [&](std::size_t misalign) {
      return is_floating(dtype) ? floats(dtype, values, misalign)
                                : integers(dtype, fitting, misalign);
    };
    const auto aligned = compute_reductions(make(0));
    for (std::size_t misalign = 1; misalign < 8; ++misalign) {
      const auto shifted = compute_reductions(make(misalign));
      for (const auto& name : all_key_names()) {
        EXPECT_TRUE(same(get(shifted, name), *get(aligned, name))) << name << " at " << misalign;
      }
    }
  }
}

// ---- large tensors against a naive long double reference -----------------------------------

struct Reference {
  long double min = 0, max = 0, sum = 0, abs_sum = 0, squares = 0, prod = 1;
  long double variance = 0, abs_variance = 0;
  long double abs_min = 0, abs_max = 0;
};

Reference reference_of(const std::vector<long double>& values) {
  Reference ref;
  ref.min = ref.max = values.front();
  ref.abs_min = ref.abs_max = std::fabs(values.front());
  for (const long double x : values) {
    ref.min = std::min(ref.min, x);
    ref.max = std::max(ref.max, x);
    ref.abs_min = std::min(ref.abs_min, std::fabs(x));
    ref.abs_max = std::max(ref.abs_max, std::fabs(x));
    ref.sum += x;
    ref.abs_sum += std::fabs(x);
    ref.squares += x * x;
    ref.prod *= x;
  }
  const auto n = static_cast<long double>(values.size());
  const long double mean = ref.sum / n, abs_mean = ref.abs_sum / n;
  for (const long double x : values) {
    ref.variance += (x - mean) * (x - mean);
    ref.abs_variance += (std::fabs(x) - abs_mean) * (std::fabs(x) - abs_mean);
  }
  ref.variance /= n;
  ref.abs_variance /= n;
  return ref;
}

// Within `tolerance` relative to the reference (absolute near zero).
void expect_close(const ReductionSet& set, const Reference& ref, std::size_t count,
                  double tolerance) {
  const auto n = static_cast<long double>(count);
  const auto check = [&](const char* name, long double expected) {
    const double actual = get(set, name)->as_double();
    const double scale = std::max(1.0, std::fabs(static_cast<double>(expected)));
    EXPECT_NEAR(actual, static_cast<double>(expected), scale * tolerance) << name;
  };
  const auto relative = [&](const char* name, long double expected) {
    const double actual = get(set, name)->as_double();
    EXPECT_NEAR(actual, static_cast<double>(expected),
                std::fabs(static_cast<double>(expected)) * tolerance)
        << name;
  };
  check("min", ref.min);
  check("max", ref.max);
  check("abs_min", ref.abs_min);
  check("abs_max", ref.abs_max);
  relative("sum", ref.sum);
  relative("mean", ref.sum / n);
  relative("abs_sum", ref.abs_sum);
  relative("abs_mean", ref.abs_sum / n);
  relative("l1", ref.abs_sum);
  relative("l2", std::sqrt(ref.squares));
  relative("variance", ref.variance);
  relative("std", std::sqrt(ref.variance));
  relative("abs_variance", ref.abs_variance);
  relative("abs_std", std::sqrt(ref.abs_variance));
}

TEST(ReductionsTest, LargeFloatTensorsMatchAnAccurateReference) {
  // An offset much larger than the spread makes the variance hard to get in one pass.
  struct Case {
    DType dtype;
    std::size_t count;  // float16 sums must stay below 65504
    double tolerance;   // the dtype's rounding, once
  };
  for (const Case c : {Case{DType::Float64, 100003, 1e-12}, Case{DType::Float32, 100003, 1.2e-7},
                       Case{DType::BFloat16, 100003, 8e-3}, Case{DType::Float16, 20011, 1e-3}}) {
    SCOPED_TRACE(dtype_name(c.dtype));
    std::mt19937 rng(5);
    std::normal_distribution<double> normal(3.0, 0.01);
    std::vector<double> raw(c.count);
    for (auto& value : raw) value = normal(rng);
    const TensorValue tensor = floats(c.dtype, raw, 3);
    std::vector<long double> stored(c.count);
    for (std::size_t i = 0; i < c.count; ++i) {
      stored[i] = tensor.as_double(static_cast<std::int64_t>(i));
    }
    const Reference ref = reference_of(stored);
    const auto set = compute_reductions(tensor);
    expect_close(set, ref, c.count, c.tolerance);
    // Exact extremes: they are elements.
    EXPECT_EQ(get(set, "min")->as_double(), static_cast<double>(ref.min));
    EXPECT_EQ(get(set, "max")->as_double(), static_cast<double>(ref.max));
  }
}

TEST(ReductionsTest, LargeSignedTensorsMatchAnAccurateReference) {
  std::mt19937_64 rng(9);
  const std::size_t count = 70001;
  for (const DType dtype : kSignedDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const int bits = static_cast<int>(dtype_size(dtype)) * 8;
    std::vector<std::int64_t> values(count);
    for (auto& value : values) {
      value = static_cast<std::int64_t>(rng()) >> (64 - bits);  // full range of the dtype
    }
    values[17] = -(std::int64_t{1} << (bits - 2));  // a few known extremes
    std::vector<long double> wide(values.begin(), values.end());
    const Reference ref = reference_of(wide);
    const auto set = compute_reductions(integers(dtype, values, 5));
    expect_close(set, ref, count, 1e-12);
    long double exact_sum = 0;
    for (const auto value : values) exact_sum += value;
    if (bits < 64) {
      EXPECT_TRUE(same(get(set, "sum"), i64(static_cast<std::int64_t>(exact_sum))));
    }
    std::int64_t min = values[0], max = values[0];
    for (const auto value : values) {
      min = std::min(min, value);
      max = std::max(max, value);
    }
    EXPECT_TRUE(same(get(set, "min"), Scalar::of_int(dtype, min)));
    EXPECT_TRUE(same(get(set, "max"), Scalar::of_int(dtype, max)));
  }
}

TEST(ReductionsTest, LargeUnsignedTensorsMatchAnAccurateReference) {
  std::mt19937_64 rng(13);
  const std::size_t count = 40009;
  std::vector<std::uint64_t> values(count);
  for (auto& value : values) value = rng() >> 40;  // sums stay exact in int64 and long double
  std::vector<long double> wide(values.begin(), values.end());
  const Reference ref = reference_of(wide);
  const auto set = compute_reductions(typed(DType::UInt64, values, 1));
  expect_close(set, ref, count, 1e-12);
  std::uint64_t sum = 0;
  for (const auto value : values) sum += value;
  EXPECT_TRUE(same(get(set, "sum"), u64(sum)));
  EXPECT_TRUE(same(get(set, "abs_sum"), u64(sum)));
}

// ---- correct rounding to the dtype ---------------------------------------------------------

TEST(ReductionsTest, ResultsAreRoundedToTheDtypeOnce) {
  // Each sum lies just above a tie of the target dtype: rounding through float first would land
  // on the tie and go to even (down); rounding once goes up.
  const auto bf16 =
      compute_reductions(floats(DType::BFloat16, {1.0, std::ldexp(1.0, -8), std::ldexp(1.0, -30)}));
  EXPECT_EQ(get(bf16, "sum")->as_double(), 1.0 + std::ldexp(1.0, -7));
  const auto bf16_below = compute_reductions(
      floats(DType::BFloat16, {1.0, std::ldexp(1.0, -8), -std::ldexp(1.0, -30)}));
  EXPECT_EQ(get(bf16_below, "sum")->as_double(), 1.0);
  const auto bf16_tie = compute_reductions(floats(DType::BFloat16, {1.0, std::ldexp(1.0, -8)}));
  EXPECT_EQ(get(bf16_tie, "sum")->as_double(), 1.0);  // an exact tie still goes to even
  const auto bf16_top = compute_reductions(floats(DType::BFloat16, {3e38, 3e38}));
  EXPECT_EQ(get(bf16_top, "sum")->as_double(), kInf);
  EXPECT_EQ(get(bf16_top, "mean")->as_double(),
            static_cast<double>(bfloat16_to_float(float_to_bfloat16(3e38f))));
  const auto half =
      compute_reductions(floats(DType::Float16, {1.0, std::ldexp(1.0, -11), std::ldexp(1.0, -24)}));
  EXPECT_EQ(get(half, "sum")->as_double(), 1.0 + std::ldexp(1.0, -10));
  const auto single =
      compute_reductions(floats(DType::Float32, {1.0, std::ldexp(1.0, -24), std::ldexp(1.0, -50)}));
  EXPECT_EQ(get(single, "sum")->as_double(), 1.0 + std::ldexp(1.0, -23));
}

TEST(ReductionsTest, Float16SubnormalsAndExtremesAreReadExactly) {
  // Every finite float16 bit pattern, read back through min/max of a one-element tensor.
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto half = static_cast<std::uint16_t>(bits);
    if ((half & 0x7c00u) == 0x7c00u) continue;  // Inf/NaN covered elsewhere
    const auto set = compute_reductions(typed<std::uint16_t>(DType::Float16, {half}));
    const double expected = float16_to_float(half);
    ASSERT_EQ(get(set, "max")->as_double(), expected) << std::hex << bits;
    ASSERT_EQ(get(set, "abs_min")->as_double(), std::fabs(expected)) << std::hex << bits;
  }
}

// ---- integer overflow: promoted to float64, never wrapped ----------------------------------

TEST(ReductionsTest, IntegerSumsThatDoNotFitBecomeFloat64) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  const auto over = compute_reductions(integers(DType::Int64, {kMax, 1}));
  EXPECT_TRUE(same(get(over, "sum"), f64(std::ldexp(1.0, 63))));
  EXPECT_TRUE(same(get(over, "mean"), f64(std::ldexp(1.0, 62))));
  // The exact sum decides, not the order it was accumulated in.
  const auto back = compute_reductions(integers(DType::Int64, {kMax, 1, -1}));
  EXPECT_TRUE(same(get(back, "sum"), i64(kMax)));
  const auto under = compute_reductions(integers(DType::Int64, {kMin, -1}));
  EXPECT_TRUE(same(get(under, "sum"), f64(-std::ldexp(1.0, 63))));
  EXPECT_TRUE(same(get(under, "abs_sum"), f64(std::ldexp(1.0, 63) + 1)));
  // Many int64 elements that overflow only together.
  const auto many = compute_reductions(integers(DType::Int64, std::vector<std::int64_t>(4, kMax)));
  EXPECT_TRUE(same(get(many, "sum"), f64(4.0 * static_cast<double>(kMax))));

  constexpr std::uint64_t kUMax = std::numeric_limits<std::uint64_t>::max();
  const auto fits = compute_reductions(typed<std::uint64_t>(DType::UInt64, {kUMax - 1, 1}));
  EXPECT_TRUE(same(get(fits, "sum"), u64(kUMax)));
  const auto beyond = compute_reductions(typed<std::uint64_t>(DType::UInt64, {kUMax, 1}));
  EXPECT_TRUE(same(get(beyond, "sum"), f64(std::ldexp(1.0, 64))));
  EXPECT_TRUE(same(get(beyond, "max"), Scalar::of_uint(DType::UInt64, kUMax)));
}

TEST(ReductionsTest, IntegerProductsThatDoNotFitBecomeFloat64) {
  // smdebug's dt_int32 sample wraps around to -5172539903916780544; rulestream does not.
  const auto int32 =
      compute_reductions(integers(DType::Int32, std::vector<std::int64_t>(30, 1000)));
  EXPECT_EQ(get(int32, "prod")->dtype(), DType::Float64);
  EXPECT_NEAR(get(int32, "prod")->as_double(), 1e90, 1e90 * 1e-13);
  EXPECT_NEAR(get(int32, "abs_prod")->as_double(), 1e90, 1e90 * 1e-13);

  const auto negative =
      compute_reductions(integers(DType::Int64, {std::int64_t{1} << 32, -(std::int64_t{1} << 32)}));
  EXPECT_TRUE(same(get(negative, "prod"), f64(-std::ldexp(1.0, 64))));
  EXPECT_TRUE(same(get(negative, "abs_prod"), f64(std::ldexp(1.0, 64))));

  // Exactly INT64_MIN fits; its absolute value does not.
  const auto edge = compute_reductions(integers(DType::Int64, {std::int64_t{1} << 62, 2, -1}));
  EXPECT_TRUE(same(get(edge, "prod"), i64(std::numeric_limits<std::int64_t>::min())));
  EXPECT_TRUE(same(get(edge, "abs_prod"), f64(std::ldexp(1.0, 63))));
  const auto positive_edge = compute_reductions(integers(DType::Int64, {std::int64_t{1} << 62, 2}));
  EXPECT_TRUE(same(get(positive_edge, "prod"), f64(std::ldexp(1.0, 63))));

  // A zero anywhere, even after the product has left 64 bits, makes it exactly 0.
  std::vector<std::int64_t> zero_late(40, 1 << 20);
  zero_late.push_back(0);
  const auto zero = compute_reductions(integers(DType::Int32, zero_late));
  EXPECT_TRUE(same(get(zero, "prod"), i64(0)));
  EXPECT_TRUE(same(get(zero, "abs_prod"), i64(0)));

  // uint64: exact up to 2^64 - 1.
  const auto unsigned_fits =
      compute_reductions(typed<std::uint64_t>(DType::UInt64, {std::uint64_t{1} << 63, 1, 1}));
  EXPECT_TRUE(same(get(unsigned_fits, "prod"), u64(std::uint64_t{1} << 63)));
  const auto unsigned_over =
      compute_reductions(typed<std::uint64_t>(DType::UInt64, {std::uint64_t{1} << 63, 2}));
  EXPECT_TRUE(same(get(unsigned_over, "prod"), f64(std::ldexp(1.0, 64))));
}

TEST(ReductionsTest, ProductsOfManySmallIntegersStayExact) {
  // 62 factors of 2 and one of -1, spread over the kernel's independent chains and its tail.
  std::vector<std::int64_t> values(63, 1);
  for (std::size_t i = 0; i < 62; ++i) values[i] = 2;
  values[62] = -1;
  const auto set = compute_reductions(integers(DType::Int8, values));
  EXPECT_TRUE(same(get(set, "prod"), i64(-(std::int64_t{1} << 62))));
  values.push_back(2);
  const auto edge = compute_reductions(integers(DType::Int8, values));
  EXPECT_TRUE(same(get(edge, "prod"), i64(std::numeric_limits<std::int64_t>::min())));
  EXPECT_TRUE(same(get(edge, "abs_prod"), f64(std::ldexp(1.0, 63))));
}

TEST(ReductionsTest, AbsOfTheMostNegativeIntegerBecomesFloat64) {
  // |-128| does not fit int8 (numpy wraps it back to -128).
  const auto set = compute_reductions(integers(DType::Int8, {-128, 5}));
  EXPECT_TRUE(same(get(set, "min"), Scalar::of_int(DType::Int8, -128)));
  EXPECT_TRUE(same(get(set, "abs_max"), f64(128)));
  EXPECT_TRUE(same(get(set, "abs_min"), Scalar::of_int(DType::Int8, 5)));
  EXPECT_TRUE(same(get(set, "abs_sum"), i64(133)));
  EXPECT_TRUE(same(get(set, "abs_mean"), f64(66.5)));
  const auto wide =
      compute_reductions(integers(DType::Int64, {std::numeric_limits<std::int64_t>::min()}));
  EXPECT_TRUE(same(get(wide, "abs_max"), f64(std::ldexp(1.0, 63))));
  EXPECT_TRUE(same(get(wide, "abs_sum"), f64(std::ldexp(1.0, 63))));
  EXPECT_TRUE(same(get(wide, "sum"), i64(std::numeric_limits<std::int64_t>::min())));
}

// ---- unsupported values --------------------------------------------------------------------

TEST(ReductionsTest, StringsAndComplexHaveNoReductions) {
  const TensorValue strings(Shape{2}, {"a", "b"});
  const TensorValue complex =
      tensor_over(DType::Complex64, std::vector<std::byte>(16), Shape{2}, 0);
  for (const TensorValue* value : {&strings, &complex}) {
    const std::string dtype(dtype_name(value->dtype()));
    SCOPED_TRACE(dtype);
    const auto set = compute_reductions(*value);
    for (const auto& name : all_key_names()) EXPECT_FALSE(get(set, name).has_value()) << name;
    try {
      compute_reduction(*value, {Reduction::Mean, true});
      FAIL() << "expected ReductionUnsupported";
    } catch (const ReductionUnsupported& error) {
      EXPECT_NE(std::string(error.what()).find(dtype), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find("abs_mean"), std::string::npos) << error.what();
    }
  }
  EXPECT_THROW(compute_reduction(TensorValue(), {Reduction::Sum, false}), ReductionUnsupported);
}

// ---- compute_reduction agrees with compute_reductions --------------------------------------

TEST(ReductionsTest, SingleReductionMatchesTheFullSet) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> uniform(-9, 9);
  std::vector<double> values(3001);
  for (auto& value : values) value = uniform(rng) / 4.0;
  for (const DType dtype : kRealDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    std::vector<std::int64_t> ints(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      const auto v = static_cast<std::int64_t>(values[i] * 4);
      ints[i] = is_signed_integer(dtype) ? v : dtype == DType::Bool ? v > 0 : std::abs(v);
    }
    const TensorValue tensor = is_floating(dtype) ? floats(dtype, values) : integers(dtype, ints);
    const auto set = compute_reductions(tensor);
    for (int i = 0; i < kReductionKeyCount; ++i) {
      const ReductionKey key = ReductionKey::from_index(i);
      EXPECT_TRUE(same(compute_reduction(tensor, key), *set.get(key))) << reduction_key_name(key);
    }
  }
}

}  // namespace
}  // namespace rulestream
