#include "core/model/half.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace rulestream {

float float16_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  const std::uint32_t mantissa = bits & 0x3ffu;
  std::uint32_t out = 0;
  if (exponent == 0) {
    if (mantissa == 0) {
      out = sign;
    } else {
      // Subnormal half: value = mantissa * 2^-24, exactly representable as a float.
      const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
      return sign != 0 ? -magnitude : magnitude;
    }
  } else if (exponent == 0x1f) {
    out = sign | 0x7f800000u | (mantissa << 13);  // Inf, or NaN keeping its payload
  } else {
    out = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  }
  return std::bit_cast<float>(out);
}

std::uint16_t double_to_float16(double value) {
  const std::uint16_t sign = std::signbit(value) ? 0x8000u : 0u;
  if (std::isnan(value)) return static_cast<std::uint16_t>(sign | 0x7e00u);
  const double magnitude = std::fabs(value);
  if (std::isinf(magnitude)) return static_cast<std::uint16_t>(sign | 0x7c00u);
  // Largest half is 65504; anything at or above the halfway point to 65536 rounds to Inf.
  if (magnitude >= 65520.0) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (magnitude < std::ldexp(1.0, -14)) {
    // Subnormal range: units of 2^-24, round half to even.
    const double units = std::nearbyint(magnitude * std::ldexp(1.0, 24));
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(units));
  }
  int exponent = 0;
  const double fraction = std::frexp(magnitude, &exponent);  // magnitude = fraction * 2^exponent
  // fraction in [0.5, 1): the half has 11 significant bits.
  double significand = std::nearbyint(std::ldexp(fraction, 11));  // in [1024, 2048]
  if (significand >= 2048.0) {
    significand /= 2.0;
    ++exponent;
  }
  const int biased = exponent - 1 + 15;
  if (biased >= 0x1f) return static_cast<std::uint16_t>(sign | 0x7c00u);
  const auto mantissa = static_cast<std::uint16_t>(static_cast<int>(significand) - 1024);
  return static_cast<std::uint16_t>(sign | (biased << 10) | mantissa);
}

std::uint16_t float_to_float16(float value) {
  return double_to_float16(value);
}

float bfloat16_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t float_to_bfloat16(float value) {
  const auto bits = std::bit_cast<std::uint32_t>(value);
  if (std::isnan(value)) return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);
  const std::uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

std::uint16_t double_to_bfloat16(double value) {
  if (!std::isfinite(value)) return float_to_bfloat16(static_cast<float>(value));
  // Narrow to float with round-to-odd: the float keeps 16 more bits than bfloat16, so the one
  // round-to-nearest-even below is then exact.
  float narrowed = static_cast<float>(value);
  if (std::isinf(narrowed)) {
    narrowed = std::copysign(std::numeric_limits<float>::max(), narrowed);  // odd, > bf16 max
  } else if (static_cast<double>(narrowed) != value) {
    auto bits = std::bit_cast<std::uint32_t>(narrowed);
    if (std::fabs(static_cast<double>(narrowed)) > std::fabs(value)) --bits;  // toward zero
    narrowed = std::bit_cast<float>(bits | 1u);
  }
  return float_to_bfloat16(narrowed);
}

}  // namespace rulestream
