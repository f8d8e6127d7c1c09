#pragma once

// The hot loops behind stages/reduce/reductions.hpp: one pass over a tensor's raw (possibly
// unaligned) element bytes, returning sums and extremes from which every reduction is then derived.
// Internal to stages/reductions*.cpp.

#include <cstddef>
#include <cstdint>

#include "core/model/dtype.hpp"

namespace rulestream::reduction_kernels {

__extension__ typedef __int128 Int128;

// Sums of the elements shifted by the first one, from which the variance follows without the
// cancellation of sum(x^2) - sum(x)^2 / n (and exactly 0 for a constant tensor).
struct ShiftedMoments {
  double shift = 0;            // K, the first element
  double shifted_sum = 0;      // sum(x - K)
  double shifted_squares = 0;  // sum((x - K)^2)
};

// Elements that are zero (-0.0 included), NaN and infinite: what the AllZero and ExplodingTensor
// rules look at, counted in the same pass so that they never read the elements again.
struct ElementTallies {
  std::int64_t zeros = 0;
  std::int64_t nans = 0;
  std::int64_t infs = 0;
};

// A floating tensor (float16, bfloat16, float32, float64) summarised in double. The extremes
// are elements widened exactly; they are meaningless when `abs_sum` is NaN (some element is
// NaN), which the caller checks first.
struct FloatStats {
  std::size_t count = 0;
  double min = 0, max = 0, abs_min = 0, abs_max = 0;
  double sum = 0;      // sum(x)
  double abs_sum = 0;  // sum(|x|): NaN exactly when an element is NaN
  double squares = 0;  // sum(x^2)
  double product = 1;  // prod(x), in double
  ShiftedMoments plain, abs;
  ElementTallies tallies;
};

// An integer or bool tensor. Extremes and sums are exact; the moments are in double.
// For unsigned and bool tensors the abs fields repeat the plain ones.
struct IntStats {
  std::size_t count = 0;
  Int128 min = 0, max = 0, abs_min = 0, abs_max = 0;
  Int128 sum = 0, abs_sum = 0;
  double squares = 0;
  ShiftedMoments plain, abs;
  ElementTallies tallies;  // nans and infs stay 0
};

// The product of an integer or bool tensor, from a loop of its own (int_stats leaves it out):
// exact when its magnitude stays below 2^64, else computed in double. A zero anywhere makes it
// exactly 0 whatever came before.
struct IntProduct {
  bool exact = true;
  Int128 value = 1;     // when exact
  double approx = 1.0;  // when not exact
};

// `dtype` must be floating for the float_* kernels, integer or bool for the int_* ones;
// `data` holds `count` elements of it, at any alignment.
FloatStats float_stats(DType dtype, const std::byte* data, std::size_t count);
// float_stats of a float64 tensor's elements times `scale`, a power of two: for the rare tensor
// whose sums overflow double although its elements are finite.
FloatStats scaled_float64_stats(const std::byte* data, std::size_t count, double scale);
IntStats int_stats(DType dtype, const std::byte* data, std::size_t count);
IntProduct int_product(DType dtype, const std::byte* data, std::size_t count);

}  // namespace rulestream::reduction_kernels
