#include "stages/reduce/reductions_kernels.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/model/kernel_clones.hpp"

// Compiled with -fopenmp-simd (see CMakeLists.txt): `omp simd reduction` lets GCC spread these
// sums over vector lanes, a reassociation it may not do on its own without -ffast-math (which
// would break NaN handling).

// On x86-64 each kernel is built three times and the loader picks the best the CPU has
// (core/model/kernel_clones.hpp).

namespace rulestream::reduction_kernels {
namespace {

// Elements are processed in chunks small enough to stay in L1 between the loops that read them.
// Per-chunk totals also bound the rounding error (it grows with the chunk length plus the number
// of chunks, not with the element count) and keep 64-bit integer chunk sums from overflowing.
constexpr std::size_t kChunk = 2048;

// memcpy loads: the bytes may sit at any alignment inside the record they came from. GCC turns
// these into plain unaligned vector loads.
template <typename T>
[[gnu::always_inline]] inline T load(const std::byte* data, std::size_t index) {
  T value;
  std::memcpy(&value, data + index * sizeof(T), sizeof(T));
  return value;
}

// Loaders read element `index` as the type the kernel computes in (`Wide`). Those that convert
// fill a per-chunk buffer once rather than converting in every loop.
template <typename T>
struct LoadPlain {
  using Wide = T;
  T operator()(const std::byte* data, std::size_t index) const { return load<T>(data, index); }
};

struct LoadFloat16 {
  using Wide = float;
  // Branch-free so that it vectorises: shifting the magnitude into float position and scaling by
  // 2^112 re-biases the exponent and turns half subnormals into float normals, exactly; only
  // Inf/NaN need their exponent forced to all ones.
  float operator()(const std::byte* data, std::size_t index) const {
    const std::uint32_t half = load<std::uint16_t>(data, index);
    const std::uint32_t magnitude = half & 0x7fffu;
    const float scaled = std::bit_cast<float>(magnitude << 13) * 0x1p112f;
    std::uint32_t bits = std::bit_cast<std::uint32_t>(scaled);
    bits |= magnitude >= 0x7c00u ? 0x7f800000u : 0u;
    bits |= (half & 0x8000u) << 16;
    return std::bit_cast<float>(bits);
  }
};

struct LoadBFloat16 {
  using Wide = float;
  float operator()(const std::byte* data, std::size_t index) const {
    return std::bit_cast<float>(static_cast<std::uint32_t>(load<std::uint16_t>(data, index)) << 16);
  }
};

// 8- and 16-bit integers are widened to int32: int32 lanes keep the extremes and sums exact and
// the kernel count down.
template <typename T>
struct LoadWidened {
  using Wide = std::int32_t;
  std::int32_t operator()(const std::byte* data, std::size_t index) const {
    return load<T>(data, index);
  }
};

// float64 elements times a power of two (exact, bar underflow), for tensors whose sums of
// squares overflow double.
struct LoadScaledFloat64 {
  using Wide = double;
  double scale;
  double operator()(const std::byte* data, std::size_t index) const {
    return load<double>(data, index) * scale;
  }
};

// numpy reads any non-zero byte as True.
struct LoadBool {
  using Wide = std::int32_t;
  std::int32_t operator()(const std::byte* data, std::size_t index) const {
    return load<std::uint8_t>(data, index) != 0 ? 1 : 0;
  }
};

// ---- floating tensors ----------------------------------------------------------------------

// Running totals; F (float or double) is the type the extremes are kept in.
template <typename F>
struct FloatTotals {
  explicit FloatTotals(F first)
      : min(first),
        max(first),
        abs_min(std::fabs(first)),
        shift(first),
        abs_shift(std::fabs(first)) {}

  // No abs_max: max(|min|, |max|) is the same element, for one comparison fewer per element.
  F min, max, abs_min;
  double shift, abs_shift;
  double sum = 0, abs_sum = 0, squares = 0, product = 1;
  double shifted_sum = 0, shifted_squares = 0, abs_shifted_sum = 0, abs_shifted_squares = 0;
  ElementTallies tallies;
};

// One float64 chunk, in one loop. NaN is not tracked: it shows in abs_sum, and the caller then
// ignores the extremes.
[[gnu::always_inline]] inline void add_chunk(const std::byte* data, std::size_t begin,
                                             std::size_t end, FloatTotals<double>& totals) {
  double min = totals.min, max = totals.max, abs_min = totals.abs_min;
  const double shift = totals.shift, abs_shift = totals.abs_shift;
  double sum = 0, abs_sum = 0, squares = 0, product = 1;
  double shifted_sum = 0, shifted_squares = 0, abs_shifted_sum = 0, abs_shifted_squares = 0;
#pragma omp simd reduction(+ : sum, abs_sum, squares, shifted_sum, shifted_squares, \
                               abs_shifted_sum, abs_shifted_squares)                \
    reduction(* : product) reduction(min : min, abs_min) reduction(max : max)
  for (std::size_t i = begin; i < end; ++i) {
    const double x = load<double>(data, i);
    const double ax = std::fabs(x);
    min = x < min ? x : min;
    max = x > max ? x : max;
    abs_min = ax < abs_min ? ax : abs_min;
    const double d = x - shift;
    const double ad = ax - abs_shift;
    sum += x;
    abs_sum += ax;
    squares += x * x;
    product *= x;
    shifted_sum += d;
    shifted_squares += d * d;
    abs_shifted_sum += ad;
    abs_shifted_squares += ad * ad;
  }
  totals.min = min;
  totals.max = max;
  totals.abs_min = abs_min;
  totals.sum += sum;
  totals.abs_sum += abs_sum;
  totals.squares += squares;
  totals.product *= product;
  totals.shifted_sum += shifted_sum;
  totals.shifted_squares += shifted_squares;
  totals.abs_shifted_sum += abs_shifted_sum;
  totals.abs_shifted_squares += abs_shifted_squares;
}

// One float32 chunk (also float16/bfloat16, widened). Eight floats per vector become two vectors
// of doubles, and twelve accumulators of two vectors each would not fit the sixteen AVX2
// registers: two loops with half the accumulators each, the second reading the chunk again from
// L1, beat spilling them.
[[gnu::always_inline]] inline void add_chunk(const std::byte* data, std::size_t begin,
                                             std::size_t end, FloatTotals<float>& totals) {
  float min = totals.min, max = totals.max, abs_min = totals.abs_min;
  double sum = 0, abs_sum = 0, squares = 0, product = 1;
#pragma omp simd reduction(+ : sum, abs_sum, squares) reduction(* : product) \
    reduction(min : min, abs_min) reduction(max : max)
  for (std::size_t i = begin; i < end; ++i) {
    const float x = load<float>(data, i);
    const float ax = std::fabs(x);
    min = x < min ? x : min;
    max = x > max ? x : max;
    abs_min = ax < abs_min ? ax : abs_min;
    const double xd = x;
    sum += xd;
    abs_sum += std::fabs(xd);
    squares += xd * xd;
    product *= xd;
  }

  const double shift = totals.shift, abs_shift = totals.abs_shift;
  double shifted_sum = 0, shifted_squares = 0, abs_shifted_sum = 0, abs_shifted_squares = 0;
#pragma omp simd reduction(+ : shifted_sum, shifted_squares, abs_shifted_sum, abs_shifted_squares)
  for (std::size_t i = begin; i < end; ++i) {
    const double x = load<float>(data, i);
    const double d = x - shift;
    const double ad = std::fabs(x) - abs_shift;
    shifted_sum += d;
    shifted_squares += d * d;
    abs_shifted_sum += ad;
    abs_shifted_squares += ad * ad;
  }

  totals.min = min;
  totals.max = max;
  totals.abs_min = abs_min;
  totals.sum += sum;
  totals.abs_sum += abs_sum;
  totals.squares += squares;
  totals.product *= product;
  totals.shifted_sum += shifted_sum;
  totals.shifted_squares += shifted_squares;
  totals.abs_shifted_sum += abs_shifted_sum;
  totals.abs_shifted_squares += abs_shifted_squares;
}

// Counts one chunk's zero elements (W is the kernel's Wide type), in a loop of its own: the chunk
// is in L1 by now, and the sums' loops already use every vector register.
template <typename W>
[[gnu::always_inline]] inline void tally_chunk(const std::byte* data, std::size_t begin,
                                               std::size_t end, ElementTallies& tallies) {
  std::int32_t zeros = 0;  // a chunk has at most kChunk elements
#pragma omp simd reduction(+ : zeros)
  for (std::size_t i = begin; i < end; ++i) zeros += load<W>(data, i) == W{0} ? 1 : 0;
  tallies.zeros += zeros;
}

// Counts one chunk's NaN and infinite elements.
template <typename W>
[[gnu::always_inline]] inline void tally_nonfinite_chunk(const std::byte* data, std::size_t begin,
                                                         std::size_t end, ElementTallies& tallies) {
  std::int32_t nans = 0, infs = 0;
#pragma omp simd reduction(+ : nans, infs)
  for (std::size_t i = begin; i < end; ++i) {
    const W x = load<W>(data, i);
    nans += x != x ? 1 : 0;
    infs += std::fabs(x) == std::numeric_limits<W>::infinity() ? 1 : 0;
  }
  tallies.nans += nans;
  tallies.infs += infs;
}

// Runs chunk(bytes, begin, end) over every chunk of the tensor: on its own bytes when they
// already hold Wide values, else on a stack buffer the chunk was converted into.
template <typename Load, typename Chunk>
[[gnu::always_inline]] inline void for_each_chunk(const std::byte* data, std::size_t count,
                                                  const Load& load_element, Chunk chunk) {
  using Wide = typename Load::Wide;
  for (std::size_t begin = 0; begin < count; begin += kChunk) {
    const std::size_t end = std::min(count, begin + kChunk);
    if constexpr (std::is_same_v<Load, LoadPlain<Wide>>) {
      chunk(data, begin, end);
    } else {
      alignas(64) Wide buffer[kChunk];
      const std::size_t length = end - begin;
#pragma omp simd
      for (std::size_t i = 0; i < length; ++i) buffer[i] = load_element(data, begin + i);
      chunk(reinterpret_cast<const std::byte*>(buffer), 0, length);
    }
  }
}

// Adds every chunk to the totals (add_chunk) and counts its zeros.
template <typename Load, typename Totals>
[[gnu::always_inline]] inline void add_chunks(const std::byte* data, std::size_t count,
                                              const Load& load_element, Totals& totals) {
  using Wide = typename Load::Wide;
  for_each_chunk(data, count, load_element,
                 [&](const std::byte* bytes, std::size_t begin, std::size_t end)
                     RULESTREAM_INLINE_LAMBDA {
                       add_chunk(bytes, begin, end, totals);
                       tally_chunk<Wide>(bytes, begin, end, totals.tallies);
                     });
}

template <typename Load>
[[gnu::always_inline]] inline FloatStats float_stats_of(const std::byte* data, std::size_t count,
                                                        const Load& load_element = Load{}) {
  FloatStats stats;
  stats.count = count;
  if (count == 0) return stats;

  using Wide = typename Load::Wide;
  FloatTotals<Wide> totals(load_element(data, 0));
  add_chunks(data, count, load_element, totals);
  const Wide abs_max = std::max(std::fabs(totals.min), std::fabs(totals.max));
  // NaN and Inf are rare: they are counted by a pass of their own over a tensor that has some
  // (a NaN makes abs_sum NaN; without one, an Inf is an extreme).
  if (std::isnan(totals.abs_sum) || std::isinf(abs_max)) {
    for_each_chunk(data, count, load_element,
                   [&](const std::byte* bytes, std::size_t begin, std::size_t end)
                       RULESTREAM_INLINE_LAMBDA {
                         tally_nonfinite_chunk<Wide>(bytes, begin, end, totals.tallies);
                       });
  }

  stats.min = totals.min;
  stats.max = totals.max;
  stats.abs_min = totals.abs_min;
  stats.abs_max = abs_max;
  stats.sum = totals.sum;
  stats.abs_sum = totals.abs_sum;
  stats.squares = totals.squares;
  stats.product = totals.product;
  stats.plain = {totals.shift, totals.shifted_sum, totals.shifted_squares};
  stats.abs = {totals.abs_shift, totals.abs_shifted_sum, totals.abs_shifted_squares};
  stats.tallies = totals.tallies;
  return stats;
}

// ---- integer and bool tensors --------------------------------------------------------------

// |x| as the unsigned type of the same width, so that |INT_MIN| is representable.
template <typename T>
[[gnu::always_inline]] inline std::make_unsigned_t<T> unsigned_abs(T x) {
  using U = std::make_unsigned_t<T>;
  if constexpr (std::is_signed_v<T>) {
    return x < 0 ? static_cast<U>(U{0} - static_cast<U>(x)) : static_cast<U>(x);
  } else {
    return x;
  }
}

template <typename T>
[[gnu::always_inline]] inline bool is_negative(T x) {
  if constexpr (std::is_signed_v<T>) {
    return x < 0;
  } else {
    static_cast<void>(x);
    return false;
  }
}

// Running totals; T is int32, uint32, int64 or uint64.
template <typename T>
struct IntTotals {
  using U = std::make_unsigned_t<T>;
  explicit IntTotals(T first)
      : min(first),
        max(first),
        abs_min(unsigned_abs(first)),
        abs_max(abs_min),
        shift(static_cast<double>(first)),
        abs_shift(static_cast<double>(abs_min)) {}

  T min, max;
  U abs_min, abs_max;
  double shift, abs_shift;
  Int128 sum = 0, abs_sum = 0;
  double squares = 0, shifted_sum = 0, shifted_squares = 0, abs_shifted_sum = 0,
         abs_shifted_squares = 0;
  ElementTallies tallies;
};

// One chunk: extremes and exact sums in the first loop, moments in double in the second (one
// loop would need more vector registers than there are). Unsigned types skip the abs work.
template <typename T>
[[gnu::always_inline]] inline void add_chunk(const std::byte* data, std::size_t begin,
                                             std::size_t end, IntTotals<T>& totals) {
  using U = std::make_unsigned_t<T>;
  constexpr bool kSigned = std::is_signed_v<T>;
  // 64-bit elements are summed as two 32-bit halves, so that the chunk sums cannot overflow.
  constexpr bool kSplit = sizeof(T) == 8;
  using Sum = std::conditional_t<kSigned, std::int64_t, std::uint64_t>;
  constexpr Int128 kHalf = Int128{1} << 32;

  T min = totals.min, max = totals.max;
  U abs_min = totals.abs_min, abs_max = totals.abs_max;
  Sum sum = 0;  // the whole sum, or the sum of the high halves when split
  std::uint64_t sum_low = 0, abs_sum = 0, abs_sum_low = 0;
#pragma omp simd reduction(+ : sum, sum_low, abs_sum, abs_sum_low) reduction(min : min, abs_min) \
    reduction(max : max, abs_max)
  for (std::size_t i = begin; i < end; ++i) {
    const T x = load<T>(data, i);
    min = x < min ? x : min;
    max = x > max ? x : max;
    if constexpr (kSplit) {
      sum += static_cast<Sum>(x >> 32);
      sum_low += static_cast<std::uint64_t>(x) & 0xffffffffu;
    } else {
      sum += static_cast<Sum>(x);
    }
    if constexpr (kSigned) {
      const U ax = unsigned_abs(x);
      abs_min = ax < abs_min ? ax : abs_min;
      abs_max = ax > abs_max ? ax : abs_max;
      if constexpr (kSplit) {
        abs_sum += ax >> 32;
        abs_sum_low += ax & 0xffffffffu;
      } else {
        abs_sum += ax;
      }
    }
  }

  const double shift = totals.shift, abs_shift = totals.abs_shift;
  double squares = 0, shifted_sum = 0, shifted_squares = 0, abs_shifted_sum = 0,
         abs_shifted_squares = 0;
#pragma omp simd reduction(+ : squares, shifted_sum, shifted_squares, abs_shifted_sum, \
                               abs_shifted_squares)
  for (std::size_t i = begin; i < end; ++i) {
    const T x = load<T>(data, i);
    const double xd = static_cast<double>(x);
    const double d = xd - shift;
    squares += xd * xd;
    shifted_sum += d;
    shifted_squares += d * d;
    if constexpr (kSigned) {
      const double ad = std::fabs(xd) - abs_shift;  // == double(|x|): rounding is symmetric
      abs_shifted_sum += ad;
      abs_shifted_squares += ad * ad;
    }
  }

  totals.min = min;
  totals.max = max;
  totals.abs_min = abs_min;
  totals.abs_max = abs_max;
  totals.sum += kSplit ? Int128{sum} * kHalf + sum_low : Int128{sum};
  totals.abs_sum += kSplit ? Int128{abs_sum} * kHalf + abs_sum_low : Int128{abs_sum};
  totals.squares += squares;
  totals.shifted_sum += shifted_sum;
  totals.shifted_squares += shifted_squares;
  totals.abs_shifted_sum += abs_shifted_sum;
  totals.abs_shifted_squares += abs_shifted_squares;
}

template <typename Load>
[[gnu::always_inline]] inline IntStats int_stats_of(const std::byte* data, std::size_t count) {
  using T = typename Load::Wide;
  IntStats stats;
  stats.count = count;
  if (count == 0) return stats;

  const Load load_element;
  IntTotals<T> totals(load_element(data, 0));
  add_chunks(data, count, load_element, totals);

  stats.min = totals.min;
  stats.max = totals.max;
  stats.sum = totals.sum;
  stats.squares = totals.squares;
  stats.plain = {totals.shift, totals.shifted_sum, totals.shifted_squares};
  stats.tallies = totals.tallies;
  if constexpr (std::is_signed_v<T>) {
    stats.abs_min = totals.abs_min;
    stats.abs_max = totals.abs_max;
    stats.abs_sum = totals.abs_sum;
    stats.abs = {totals.abs_shift, totals.abs_shifted_sum, totals.abs_shifted_squares};
  } else {
    stats.abs_min = stats.min;
    stats.abs_max = stats.max;
    stats.abs_sum = stats.sum;
    stats.abs = stats.plain;
  }
  return stats;
}

template <typename T>
[[gnu::always_inline]] inline IntProduct int_product_of(const std::byte* data, std::size_t count) {
  // Magnitudes multiply in independent uint64 chains (so that the multiplier pipelines), the
  // sign separately: exact while the magnitude stays below 2^64, which covers every int64 and
  // uint64 result. Once a chain overflows, only a zero can bring the product back.
  constexpr std::size_t kChains = 4;
  std::uint64_t chain[kChains] = {1, 1, 1, 1};
  bool negative = false;
  bool overflow = false;
  std::size_t i = 0;
  for (; i + kChains <= count && !overflow; i += kChains) {
    for (std::size_t j = 0; j < kChains; ++j) {
      const T x = load<T>(data, i + j);
      negative ^= is_negative(x);
      overflow |= __builtin_mul_overflow(chain[j], std::uint64_t{unsigned_abs(x)}, &chain[j]);
    }
  }
  for (; i < count && !overflow; ++i) {
    const T x = load<T>(data, i);
    negative ^= is_negative(x);
    overflow |= __builtin_mul_overflow(chain[0], std::uint64_t{unsigned_abs(x)}, &chain[0]);
  }
  std::uint64_t magnitude = chain[0];
  for (std::size_t j = 1; j < kChains; ++j) {
    overflow |= __builtin_mul_overflow(magnitude, chain[j], &magnitude);
  }

  IntProduct product;
  if (!overflow) {
    product.value = negative ? -Int128{magnitude} : Int128{magnitude};
    return product;
  }
  double approx = 1.0;
  int any_zero = 0;
#pragma omp simd reduction(* : approx) reduction(| : any_zero)
  for (std::size_t k = 0; k < count; ++k) {
    const T x = load<T>(data, k);
    approx *= static_cast<double>(x);
    any_zero |= x == 0 ? 1 : 0;
  }
  if (any_zero != 0) {
    product.value = 0;
    return product;
  }
  product.exact = false;
  product.approx = approx;
  return product;
}

// bool: 1 when every byte is non-zero (numpy's True), else 0.
[[gnu::always_inline]] inline IntProduct bool_product_of(const std::byte* data, std::size_t count) {
  int any_false = 0;
#pragma omp simd reduction(| : any_false)
  for (std::size_t i = 0; i < count; ++i) any_false |= load<std::uint8_t>(data, i) == 0 ? 1 : 0;
  IntProduct product;
  product.value = any_false != 0 ? 0 : 1;
  return product;
}

[[noreturn]] void wrong_dtype(const char* kernel, DType dtype) {
  throw std::invalid_argument(std::string("reduction kernel ") + kernel + " called for dtype " +
                              std::string(dtype_name(dtype)));
}

}  // namespace

RULESTREAM_KERNEL_CLONES
FloatStats float_stats(DType dtype, const std::byte* data, std::size_t count) {
  switch (dtype) {
    case DType::Float16:
      return float_stats_of<LoadFloat16>(data, count);
    case DType::BFloat16:
      return float_stats_of<LoadBFloat16>(data, count);
    case DType::Float32:
      return float_stats_of<LoadPlain<float>>(data, count);
    case DType::Float64:
      return float_stats_of<LoadPlain<double>>(data, count);
    default:
      wrong_dtype("float_stats", dtype);
  }
}

RULESTREAM_KERNEL_CLONES
FloatStats scaled_float64_stats(const std::byte* data, std::size_t count, double scale) {
  return float_stats_of(data, count, LoadScaledFloat64{scale});
}

RULESTREAM_KERNEL_CLONES
IntStats int_stats(DType dtype, const std::byte* data, std::size_t count) {
  switch (dtype) {
    case DType::Int8:
      return int_stats_of<LoadWidened<std::int8_t>>(data, count);
    case DType::Int16:
      return int_stats_of<LoadWidened<std::int16_t>>(data, count);
    case DType::Int32:
      return int_stats_of<LoadPlain<std::int32_t>>(data, count);
    case DType::Int64:
      return int_stats_of<LoadPlain<std::int64_t>>(data, count);
    case DType::UInt8:
      return int_stats_of<LoadWidened<std::uint8_t>>(data, count);
    case DType::UInt16:
      return int_stats_of<LoadWidened<std::uint16_t>>(data, count);
    case DType::UInt32:
      return int_stats_of<LoadPlain<std::uint32_t>>(data, count);
    case DType::UInt64:
      return int_stats_of<LoadPlain<std::uint64_t>>(data, count);
    case DType::Bool:
      return int_stats_of<LoadBool>(data, count);
    default:
      wrong_dtype("int_stats", dtype);
  }
}

RULESTREAM_KERNEL_CLONES
IntProduct int_product(DType dtype, const std::byte* data, std::size_t count) {
  switch (dtype) {
    case DType::Int8:
      return int_product_of<std::int8_t>(data, count);
    case DType::Int16:
      return int_product_of<std::int16_t>(data, count);
    case DType::Int32:
      return int_product_of<std::int32_t>(data, count);
    case DType::Int64:
      return int_product_of<std::int64_t>(data, count);
    case DType::UInt8:
      return int_product_of<std::uint8_t>(data, count);
    case DType::UInt16:
      return int_product_of<std::uint16_t>(data, count);
    case DType::UInt32:
      return int_product_of<std::uint32_t>(data, count);
    case DType::UInt64:
      return int_product_of<std::uint64_t>(data, count);
    case DType::Bool:
      return bool_product_of(data, count);
    default:
      wrong_dtype("int_product", dtype);
  }
}

}  // namespace rulestream::reduction_kernels
