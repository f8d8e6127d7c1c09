#include "stages/reduce/reductions.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "core/model/exceptions.hpp"
#include "core/model/half.hpp"
#include "stages/reduce/integer_result.hpp"
#include "stages/reduce/reductions_kernels.hpp"

namespace rulestream {
namespace {

using reduction_kernels::FloatStats;
using reduction_kernels::Int128;
using reduction_kernels::IntProduct;
using reduction_kernels::IntStats;
using reduction_kernels::ShiftedMoments;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// An integer product has a loop of its own; a single reduction needs only one of the two.
struct Parts {
  bool stats = true;
  bool product = true;
};

Scalar floating(DType dtype, double value) {
  return Scalar::of_double(dtype, value);
}

// ((sum d^2) - (sum d)^2 / n) / n with d = x - K: rounding may leave a variance of 0 a hair
// below zero, never more.
double population_variance(const ShiftedMoments& moments, double count) {
  const double mean_offset = moments.shifted_sum / count;
  const double variance = (moments.shifted_squares - mean_offset * moments.shifted_sum) / count;
  return variance < 0 ? 0.0 : variance;  // keeps NaN
}

// numpy subtracts the mean before squaring, so any Inf element makes the variance NaN, while
// finite elements whose squares overflow make it Inf.
double float_variance(const ShiftedMoments& moments, double count, bool has_inf) {
  if (has_inf) return kNaN;
  const double variance = population_variance(moments, count);
  return std::isfinite(variance) ? variance : kInf;
}

void set_both(ReductionSet& set, Reduction reduction, const Scalar& value) {
  set.set({reduction, false}, value);
  set.set({reduction, true}, value);
}

// Sum 0, l1/l2 0, mean/std/variance NaN; min/max stay absent.
void fill_empty(ReductionSet& set, const Scalar& zero, const Scalar& zero_norm, const Scalar& nan) {
  set_both(set, Reduction::Sum, zero);
  set_both(set, Reduction::L1, zero_norm);
  set_both(set, Reduction::L2, zero_norm);
  set_both(set, Reduction::Mean, nan);
  set_both(set, Reduction::Std, nan);
  set_both(set, Reduction::Variance, nan);
}

// What a floating tensor's sums give, in double, before rounding to the dtype.
enum Figure { kSum, kMean, kL1, kAbsMean, kL2, kVariance, kStd, kAbsVariance, kAbsStd, kFigures };
using FloatFigures = std::array<double, kFigures>;

// `scale` is the power of two the elements were multiplied by before summing.
FloatFigures figures_of(const FloatStats& stats, double scale, bool has_inf) {
  const double count = static_cast<double>(stats.count);
  const double variance = float_variance(stats.plain, count, has_inf);
  const double abs_variance = float_variance(stats.abs, count, has_inf);
  FloatFigures figures;
  figures[kSum] = stats.sum / scale;
  figures[kMean] = stats.sum / count / scale;
  figures[kL1] = stats.abs_sum / scale;
  figures[kAbsMean] = stats.abs_sum / count / scale;
  figures[kL2] = std::sqrt(stats.squares) / scale;
  figures[kVariance] = variance / scale / scale;
  figures[kStd] = std::sqrt(variance) / scale;
  figures[kAbsVariance] = abs_variance / scale / scale;
  figures[kAbsStd] = std::sqrt(abs_variance) / scale;
  return figures;
}

// float64 elements near the top of the range (beyond ~1e154) overflow sums of squares, or
// even plain sums, although the l2 norm, mean or std are finite. Summing the elements again,
// scaled down by a power of two, recovers every figure that overflowed.
void recover_overflowed(FloatFigures& figures, const FloatStats& stats, const std::byte* data) {
  if (std::all_of(figures.begin(), figures.end(), [](double f) { return std::isfinite(f); })) {
    return;
  }
  int exponent = 0;
  std::frexp(stats.abs_max, &exponent);  // the scaled elements are below 1 in magnitude
  const double scale = std::ldexp(1.0, -exponent);
  const FloatFigures scaled =
      figures_of(reduction_kernels::scaled_float64_stats(data, stats.count, scale), scale, false);
  for (int i = 0; i < kFigures; ++i) {
    if (!std::isfinite(figures[i])) figures[i] = scaled[i];
  }
}

void fill_float(ReductionSet& set, DType dtype, const std::byte* data, std::size_t count) {
  const FloatStats stats = reduction_kernels::float_stats(dtype, data, count);
  set.set_counts({.elements = static_cast<std::int64_t>(count),
                  .zeros = stats.tallies.zeros,
                  .nans = stats.tallies.nans,
                  .infs = stats.tallies.infs});
  const auto put = [&](Reduction reduction, bool abs, double value) {
    set.set({reduction, abs}, floating(dtype, value));
  };
  // |prod x| == prod |x| exactly: IEEE rounding is symmetric in sign.
  put(Reduction::Prod, false, stats.product);
  put(Reduction::Prod, true, std::fabs(stats.product));
  if (count == 0) {
    fill_empty(set, floating(dtype, 0.0), floating(dtype, 0.0), floating(dtype, kNaN));
    return;
  }
  if (std::isnan(stats.abs_sum)) {  // some element is NaN: numpy propagates it everywhere
    for (const Reduction reduction : kAllReductions) {
      set_both(set, reduction, floating(dtype, kNaN));
    }
    return;
  }
  const bool has_inf = std::isinf(stats.abs_max);
  FloatFigures figures = figures_of(stats, 1.0, has_inf);
  if (dtype == DType::Float64 && !has_inf) recover_overflowed(figures, stats, data);

  put(Reduction::Min, false, stats.min);
  put(Reduction::Max, false, stats.max);
  put(Reduction::Sum, false, figures[kSum]);
  put(Reduction::Mean, false, figures[kMean]);
  put(Reduction::Variance, false, figures[kVariance]);
  put(Reduction::Std, false, figures[kStd]);
  put(Reduction::Min, true, stats.abs_min);
  put(Reduction::Max, true, stats.abs_max);
  put(Reduction::Sum, true, figures[kL1]);
  put(Reduction::Mean, true, figures[kAbsMean]);
  put(Reduction::Variance, true, figures[kAbsVariance]);
  put(Reduction::Std, true, figures[kAbsStd]);
  set_both(set, Reduction::L1, floating(dtype, figures[kL1]));
  set_both(set, Reduction::L2, floating(dtype, figures[kL2]));
}

// An element (or |element|) in the tensor's own dtype; |INT_MIN| does not fit and becomes float64.
Scalar element_result(DType dtype, Int128 value) {
  if (dtype == DType::Bool) return Scalar::of_bool(value != 0);
  if (is_unsigned_integer(dtype)) return Scalar::of_uint(dtype, static_cast<std::uint64_t>(value));
  const Int128 dtype_max = (Int128{1} << (8 * dtype_size(dtype) - 1)) - 1;
  if (value > dtype_max) return Scalar::of_double(DType::Float64, static_cast<double>(value));
  return Scalar::of_int(dtype, static_cast<std::int64_t>(value));
}

void fill_int_stats(ReductionSet& set, DType dtype, const IntStats& stats) {
  const auto real = [](double value) { return Scalar::of_double(DType::Float64, value); };
  if (stats.count == 0) {
    fill_empty(set, integer_result(dtype, 0), real(0.0), real(kNaN));
    return;
  }
  const double count = static_cast<double>(stats.count);
  const double l1 = static_cast<double>(stats.abs_sum);
  const double variance = population_variance(stats.plain, count);
  const double abs_variance = population_variance(stats.abs, count);

  set.set({Reduction::Min, false}, element_result(dtype, stats.min));
  set.set({Reduction::Max, false}, element_result(dtype, stats.max));
  set.set({Reduction::Sum, false}, integer_result(dtype, stats.sum));
  set.set({Reduction::Mean, false}, real(static_cast<double>(stats.sum) / count));
  set.set({Reduction::Variance, false}, real(variance));
  set.set({Reduction::Std, false}, real(std::sqrt(variance)));
  set.set({Reduction::Min, true}, element_result(dtype, stats.abs_min));
  set.set({Reduction::Max, true}, element_result(dtype, stats.abs_max));
  set.set({Reduction::Sum, true}, integer_result(dtype, stats.abs_sum));
  set.set({Reduction::Mean, true}, real(l1 / count));
  set.set({Reduction::Variance, true}, real(abs_variance));
  set.set({Reduction::Std, true}, real(std::sqrt(abs_variance)));
  set_both(set, Reduction::L1, real(l1));
  set_both(set, Reduction::L2, real(std::sqrt(stats.squares)));
}

void fill_int_product(ReductionSet& set, DType dtype, const IntProduct& product) {
  if (!product.exact) {
    set.set({Reduction::Prod, false}, Scalar::of_double(DType::Float64, product.approx));
    set.set({Reduction::Prod, true}, Scalar::of_double(DType::Float64, std::fabs(product.approx)));
    return;
  }
  const Int128 magnitude = product.value < 0 ? -product.value : product.value;
  set.set({Reduction::Prod, false}, integer_result(dtype, product.value));
  set.set({Reduction::Prod, true}, integer_result(dtype, magnitude));
}

std::string unsupported_dtype(ReductionKey key, DType dtype) {
  return "cannot compute " + reduction_key_name(key) + " of a " + std::string(dtype_name(dtype)) +
         " tensor: reductions need real numbers";
}

void fill(ReductionSet& set, const TensorValue& value, Parts parts) {
  const DType dtype = value.dtype();
  const std::byte* data = value.bytes().data();
  const auto count = static_cast<std::size_t>(value.size());
  if (is_floating(dtype)) {
    fill_float(set, dtype, data, count);  // the product rides along in the same pass
    return;
  }
  if (parts.stats) {
    const IntStats stats = reduction_kernels::int_stats(dtype, data, count);
    ElementCounts counts{.elements = static_cast<std::int64_t>(count)};
    if (dtype != DType::Bool) counts.zeros = stats.tallies.zeros;
    set.set_counts(counts);
    fill_int_stats(set, dtype, stats);
  }
  if (parts.product) {
    fill_int_product(set, dtype, reduction_kernels::int_product(dtype, data, count));
  }
}

}  // namespace

ReductionSet compute_reductions(const TensorValue& value) {
  ReductionSet set;
  set.set_source_dtype(value.dtype());
  if (is_real_numeric(value.dtype())) fill(set, value, Parts{});
  return set;
}

Scalar compute_reduction(const TensorValue& value, ReductionKey key) {
  if (!is_real_numeric(value.dtype())) {
    throw ReductionUnsupported(unsupported_dtype(key, value.dtype()));
  }
  const bool product = key.reduction == Reduction::Prod;
  ReductionSet set;
  fill(set, value, Parts{.stats = !product, .product = product});
  if (const auto& result = set.get(key)) return *result;
  throw ReductionUnsupported("cannot compute " + reduction_key_name(key) + " of an empty " +
                             std::string(dtype_name(value.dtype())) + " tensor");
}

}  // namespace rulestream
