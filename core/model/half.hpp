#pragma once

#include <cstdint>

namespace rulestream {

// IEEE-754 binary16 <-> float, exact in the widening direction and round-to-nearest-even in
// the narrowing one, with subnormals, infinities and NaN handled (as numpy does).
float float16_to_float(std::uint16_t bits);
std::uint16_t float_to_float16(float value);
std::uint16_t double_to_float16(double value);  // rounds once, from double

// bfloat16: the upper half of a float32. Narrowing rounds to nearest even; NaN stays NaN.
float bfloat16_to_float(std::uint16_t bits);
std::uint16_t float_to_bfloat16(float value);
// Rounds once, from double: narrowing to float first would round twice and can go the wrong
// way at a tie.
std::uint16_t double_to_bfloat16(double value);

}  // namespace rulestream
