#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/model/dtype.hpp"
#include "core/model/reduction.hpp"
#include "core/model/tensor_value.hpp"

namespace rulestream::testing {

__extension__ typedef __int128 Int128;

// The elements of a numeric tensor as the test decodes them itself, from the raw little-endian
// bytes (not through the reader's conversions), in C order. long double (x87, 64-bit
// mantissa) holds every element of every supported dtype exactly, int64 and uint64 included.
struct DecodedElements {
  DType dtype = DType::Invalid;
  std::vector<long double> values;
  std::vector<Int128> integers;  // integer and bool dtypes only, exact
  bool integral() const { return is_integer(dtype) || dtype == DType::Bool; }
};

// Throws std::invalid_argument for strings and complex values.
DecodedElements decode_elements(const TensorValue& value);

// IEEE-754 binary16 -> double, exact (written here rather than taken from core/model/half.hpp,
// which is part of what is being tested).
double float16_to_double(std::uint16_t bits);
// Rounds to the nearest float16 (ties to even), returned as a double.
double round_to_float16(long double value);
// Rounds to the dtype's precision (float16, bfloat16, float32, float64); integers unchanged.
double round_to_dtype(long double value, DType dtype);

// Figures of the data that set the scale of rounding errors, over the elements the reduction
// sees (their absolute values for abs_ reductions give the same figures).
struct Magnitudes {
  std::size_t count = 0;
  long double sum_abs = 0;      // sum |x|
  long double mean_abs = 0;     // mean |x|
  long double mean_square = 0;  // mean x^2
};
Magnitudes magnitudes_of(const DecodedElements& elements);

// numpy's result dtype for a reduction of a `source` tensor: floating dtypes keep theirs;
// integers keep theirs for min/max, give int64 (uint64 when unsigned) for sum/prod and
// float64 for the rest; bool gives bool for min/max, int64 for sum/prod, float64 otherwise.
DType numpy_result_dtype(DType source, ReductionKey key);

// A reduction computed by the test, accurately, as rulestream promises to compute it
// (population std/variance, element-wise l1/l2 norms, integer sums and products that do not
// wrap around).
struct ReferenceReduction {
  DType dtype = DType::Invalid;  // numpy's result dtype (float64 when an integer overflows)
  long double value = 0;         // accurate, not yet rounded to the dtype
  // Integer sum/prod (and integer min/max): the exact value when it fits in 128 bits.
  std::optional<Int128> exact;
  // Integer sum/prod only: whether the exact result lies outside numpy's result dtype (int64,
  // or uint64 for unsigned), and the result modulo 2^64, which is what numpy returns.
  bool overflows = false;
  std::uint64_t wrapped = 0;
};
ReferenceReduction reference_reduction(const DecodedElements& elements, ReductionKey key);

}  // namespace rulestream::testing
