#include "tests/support/reference_counts.hpp"

#include <cmath>

namespace rulestream::testing {
namespace {

// IEEE-754 half and bfloat16 share the layout sign | exponent | mantissa; only the widths differ.
struct HalfLayout {
  std::uint16_t exponent_mask;
  std::uint16_t mantissa_mask;
};
constexpr HalfLayout kFloat16{0x7c00, 0x03ff};
constexpr HalfLayout kBFloat16{0x7f80, 0x007f};

template <typename Bits>
NonFiniteCount count_non_finite_half(const TensorValue& value, HalfLayout layout) {
  NonFiniteCount count;
  const auto elements = value.elements<Bits>();
  for (std::size_t i = 0; i < elements.size(); ++i) {
    const std::uint16_t bits = elements[i].bits;
    if ((bits & layout.exponent_mask) != layout.exponent_mask) continue;
    ((bits & layout.mantissa_mask) != 0 ? count.nan : count.inf) += 1;
  }
  return count;
}

template <typename T>
NonFiniteCount count_non_finite_float(const TensorValue& value) {
  NonFiniteCount count;
  const auto elements = value.elements<T>();
  for (std::size_t i = 0; i < elements.size(); ++i) {
    const T x = elements[i];
    count.nan += std::isnan(x) ? 1 : 0;
    count.inf += std::isinf(x) ? 1 : 0;
  }
  return count;
}

template <typename Bits>
std::int64_t count_zeros_half(const TensorValue& value) {
  std::int64_t zeros = 0;
  const auto elements = value.elements<Bits>();
  for (std::size_t i = 0; i < elements.size(); ++i) zeros += (elements[i].bits & 0x7fff) == 0;
  return zeros;
}

template <typename T>
std::int64_t count_zeros_of(const TensorValue& value) {
  std::int64_t zeros = 0;
  const auto elements = value.elements<T>();
  for (std::size_t i = 0; i < elements.size(); ++i) zeros += elements[i] == T{0} ? 1 : 0;
  return zeros;
}

}  // namespace

std::optional<NonFiniteCount> count_non_finite(const TensorValue& value) {
  switch (value.dtype()) {
    case DType::Float16:
      return count_non_finite_half<Float16Bits>(value, kFloat16);
    case DType::BFloat16:
      return count_non_finite_half<BFloat16Bits>(value, kBFloat16);
    case DType::Float32:
      return count_non_finite_float<float>(value);
    case DType::Float64:
      return count_non_finite_float<double>(value);
    default:
      return std::nullopt;
  }
}

std::optional<std::int64_t> count_zeros(const TensorValue& value) {
  switch (value.dtype()) {
    case DType::Float16:
      return count_zeros_half<Float16Bits>(value);
    case DType::BFloat16:
      return count_zeros_half<BFloat16Bits>(value);
    case DType::Float32:
      return count_zeros_of<float>(value);
    case DType::Float64:
      return count_zeros_of<double>(value);
    case DType::Int8:
      return count_zeros_of<std::int8_t>(value);
    case DType::Int16:
      return count_zeros_of<std::int16_t>(value);
    case DType::Int32:
      return count_zeros_of<std::int32_t>(value);
    case DType::Int64:
      return count_zeros_of<std::int64_t>(value);
    case DType::UInt8:
      return count_zeros_of<std::uint8_t>(value);
    case DType::UInt16:
      return count_zeros_of<std::uint16_t>(value);
    case DType::UInt32:
      return count_zeros_of<std::uint32_t>(value);
    case DType::UInt64:
      return count_zeros_of<std::uint64_t>(value);
    default:
      return std::nullopt;
  }
}

}  // namespace rulestream::testing
