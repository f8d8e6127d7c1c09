#pragma once

#include <cstdint>
#include <limits>

#include "core/model/reduction.hpp"

namespace rulestream {

__extension__ typedef __int128 Int128;

// An exact integer figure (a sum, a product) as int64 (uint64 for unsigned tensors) while it
// fits, float64 beyond: rulestream does not wrap around as numpy does.
inline Scalar integer_result(DType dtype, Int128 value) {
  constexpr Int128 kInt64Min = std::numeric_limits<std::int64_t>::min();
  constexpr Int128 kInt64Max = std::numeric_limits<std::int64_t>::max();
  constexpr Int128 kUInt64Max = std::numeric_limits<std::uint64_t>::max();
  if (is_unsigned_integer(dtype)) {
    if (value >= 0 && value <= kUInt64Max) {
      return Scalar::of_uint(DType::UInt64, static_cast<std::uint64_t>(value));
    }
  } else if (value >= kInt64Min && value <= kInt64Max) {
    return Scalar::of_int(DType::Int64, static_cast<std::int64_t>(value));
  }
  return Scalar::of_double(DType::Float64, static_cast<double>(value));
}

}  // namespace rulestream
