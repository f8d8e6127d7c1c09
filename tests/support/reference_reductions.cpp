#include "tests/support/reference_reductions.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

namespace rulestream::testing {
namespace {

template <typename T>
T load(const std::byte* data, std::size_t index) {
  T value;
  std::memcpy(&value, data + index * sizeof(T), sizeof(T));
  return value;
}

template <typename T>
void decode_integers(const TensorValue& value, DecodedElements& out) {
  const std::byte* data = value.bytes().data();
  const auto count = static_cast<std::size_t>(value.size());
  out.values.reserve(count);
  out.integers.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const T element = load<T>(data, i);
    out.integers.push_back(static_cast<Int128>(element));
    out.values.push_back(static_cast<long double>(element));
  }
}

// Rounds to a binary format with `mantissa_bits` stored bits, smallest normal exponent
// `min_exponent` and largest finite `max_finite`, to nearest with ties to even.
double round_to_binary(long double value, int mantissa_bits, int min_exponent,
                       long double max_finite) {
  if (!std::isfinite(value) || value == 0) return static_cast<double>(value);
  int exponent = 0;
  std::frexp(value, &exponent);  // value = f * 2^exponent, 0.5 <= |f| < 1
  const int unit_exponent = std::max(exponent - 1, min_exponent) - mantissa_bits;
  // Scaling by powers of two is exact; nearbyint rounds half to even in the default mode.
  const long double rounded =
      std::ldexp(std::nearbyint(std::ldexp(value, -unit_exponent)), unit_exponent);
  if (std::fabs(rounded) > max_finite) {
    return std::copysign(std::numeric_limits<double>::infinity(), static_cast<double>(value));
  }
  return static_cast<double>(rounded);
}

bool any_nan(const std::vector<long double>& values) {
  for (const long double v : values) {
    if (std::isnan(v)) return true;
  }
  return false;
}

constexpr Int128 kInt64Min = std::numeric_limits<std::int64_t>::min();
constexpr Int128 kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr Int128 kUInt64Max = std::numeric_limits<std::uint64_t>::max();

bool fits(Int128 value, DType dtype) {
  return is_unsigned_integer(dtype) ? value >= 0 && value <= kUInt64Max
                                    : value >= kInt64Min && value <= kInt64Max;
}

Int128 int128_abs(Int128 value) {
  return value < 0 ? -value : value;
}

}  // namespace

double float16_to_double(std::uint16_t bits) {
  const bool negative = (bits & 0x8000) != 0;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  double magnitude = 0;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), -24);  // subnormal
  } else if (exponent == 0x1f) {
    magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity()
                              : std::numeric_limits<double>::quiet_NaN();
  } else {
    magnitude = std::ldexp(static_cast<double>(0x400 | mantissa), exponent - 25);
  }
  return negative ? -magnitude : magnitude;
}

double round_to_float16(long double value) {
  return round_to_binary(value, 10, -14, 65504.0L);
}

double round_to_dtype(long double value, DType dtype) {
  switch (dtype) {
    case DType::Float16:
      return round_to_float16(value);
    case DType::BFloat16:
      return round_to_binary(value, 7, -126, std::ldexp(2.0L - std::ldexp(1.0L, -7), 127));
    case DType::Float32:
      return static_cast<double>(static_cast<float>(value));  // one rounding, long double -> float
    default:
      return static_cast<double>(value);
  }
}

DecodedElements decode_elements(const TensorValue& value) {
  DecodedElements out;
  out.dtype = value.dtype();
  const std::byte* data = value.bytes().data();
  const auto count = static_cast<std::size_t>(value.size());
  switch (value.dtype()) {
    case DType::Float16:
      for (std::size_t i = 0; i < count; ++i) {
        out.values.push_back(float16_to_double(load<std::uint16_t>(data, i)));
      }
      break;
    case DType::BFloat16:
      for (std::size_t i = 0; i < count; ++i) {
        const std::uint32_t widened = std::uint32_t{load<std::uint16_t>(data, i)} << 16;
        float element;
        std::memcpy(&element, &widened, sizeof element);
        out.values.push_back(element);
      }
      break;
    case DType::Float32:
      for (std::size_t i = 0; i < count; ++i) out.values.push_back(load<float>(data, i));
      break;
    case DType::Float64:
      for (std::size_t i = 0; i < count; ++i) out.values.push_back(load<double>(data, i));
      break;
    case DType::Int8:
      decode_integers<std::int8_t>(value, out);
      break;
    case DType::Int16:
      decode_integers<std::int16_t>(value, out);
      break;
    case DType::Int32:
      decode_integers<std::int32_t>(value, out);
      break;
    case DType::Int64:
      decode_integers<std::int64_t>(value, out);
      break;
    case DType::UInt8:
    case DType::Bool:
      decode_integers<std::uint8_t>(value, out);
      break;
    case DType::UInt16:
      decode_integers<std::uint16_t>(value, out);
      break;
    case DType::UInt32:
      decode_integers<std::uint32_t>(value, out);
      break;
    case DType::UInt64:
      decode_integers<std::uint64_t>(value, out);
      break;
    default:
      throw std::invalid_argument("decode_elements: " + std::string(dtype_name(value.dtype())) +
                                  " has no numeric elements");
  }
  return out;
}

Magnitudes magnitudes_of(const DecodedElements& elements) {
  Magnitudes m;
  m.count = elements.values.size();
  long double squares = 0;
  for (const long double v : elements.values) {
    m.sum_abs += std::fabs(v);
    squares += v * v;
  }
  if (m.count > 0) {
    m.mean_abs = m.sum_abs / static_cast<long double>(m.count);
    m.mean_square = squares / static_cast<long double>(m.count);
  }
  return m;
}

DType numpy_result_dtype(DType source, ReductionKey key) {
  switch (key.reduction) {
    case Reduction::Min:
    case Reduction::Max:
      return source;
    case Reduction::Sum:
    case Reduction::Prod:
      if (is_floating(source)) return source;
      return is_unsigned_integer(source) ? DType::UInt64 : DType::Int64;
    default:
      return is_floating(source) ? source : DType::Float64;
  }
}

ReferenceReduction reference_reduction(const DecodedElements& elements, ReductionKey key) {
  ReferenceReduction result;
  result.dtype = numpy_result_dtype(elements.dtype, key);

  std::vector<long double> values = elements.values;
  std::vector<Int128> integers = elements.integers;
  if (key.abs) {
    for (long double& v : values) v = std::fabs(v);
    for (Int128& v : integers) v = int128_abs(v);
  }
  const std::size_t n = values.size();
  const long double count = static_cast<long double>(n);
  const bool integral = elements.integral();
  constexpr long double kNaN = std::numeric_limits<long double>::quiet_NaN();

  auto mean = [&] {
    long double sum = 0;
    for (const long double v : values) sum += v;
    return n == 0 ? kNaN : sum / count;
  };
  auto variance = [&] {
    const long double m = mean();
    long double squares = 0;
    for (const long double v : values) squares += (v - m) * (v - m);
    return n == 0 ? kNaN : squares / count;
  };

  switch (key.reduction) {
    case Reduction::Min:
    case Reduction::Max: {
      if (n == 0) throw std::invalid_argument("reference_reduction: min/max of an empty tensor");
      const bool is_min = key.reduction == Reduction::Min;
      if (integral) {
        Int128 best = integers.front();
        for (const Int128 v : integers) best = is_min ? std::min(best, v) : std::max(best, v);
        result.exact = best;
        result.value = static_cast<long double>(best);
      } else if (any_nan(values)) {
        result.value = kNaN;  // numpy's minimum/maximum propagate NaN
      } else {
        long double best = values.front();
        for (const long double v : values) best = is_min ? std::min(best, v) : std::max(best, v);
        result.value = best;
      }
      break;
    }
    case Reduction::Mean:
      result.value = mean();
      break;
    case Reduction::Variance:
      result.value = variance();
      break;
    case Reduction::Std:
      result.value = std::sqrt(variance());
      break;
    case Reduction::Sum:
      if (integral) {
        Int128 sum = 0;
        for (const Int128 v : integers) sum += v;  // |sum| < 2^127 for any real tensor
        result.exact = sum;
        result.value = static_cast<long double>(sum);
        result.overflows = !fits(sum, result.dtype);
        result.wrapped = static_cast<std::uint64_t>(sum);
      } else {
        for (const long double v : values) result.value += v;
      }
      break;
    case Reduction::Prod:
      if (integral) {
        std::uint64_t wrapped = 1;
        long double approx = 1;
        Int128 exact = 1;
        bool exact_overflowed = false;
        bool has_zero = false;
        for (const Int128 v : integers) {
          wrapped *= static_cast<std::uint64_t>(v);  // modulo 2^64, as numpy's int64 product
          approx *= static_cast<long double>(v);
          has_zero = has_zero || v == 0;
          if (!exact_overflowed && __builtin_mul_overflow(exact, v, &exact)) {
            exact_overflowed = true;
          }
        }
        result.wrapped = wrapped;
        if (has_zero) {
          result.exact = 0;
          result.value = 0;
        } else if (!exact_overflowed) {
          result.exact = exact;
          result.value = static_cast<long double>(exact);
          result.overflows = !fits(exact, result.dtype);
        } else {
          // Nonzero integers have |x| >= 1, so a product past 2^127 only grows.
          result.value = approx;
          result.overflows = true;
        }
      } else {
        result.value = 1;
        for (const long double v : values) result.value *= v;
      }
      break;
    case Reduction::L1:
      for (const long double v : values) result.value += std::fabs(v);
      break;
    case Reduction::L2: {
      long double squares = 0;
      for (const long double v : values) squares += v * v;
      result.value = std::sqrt(squares);
      break;
    }
  }
  if (result.overflows) result.dtype = DType::Float64;  // rulestream's promise instead of wrapping
  return result;
}

}  // namespace rulestream::testing
