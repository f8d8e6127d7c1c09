#include "core/model/half.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace rulestream {
namespace {

// IEEE-754 binary16 decoded from its fields, independently of half.cpp.
double decode_half(std::uint16_t bits) {
  const double sign = (bits & 0x8000u) != 0 ? -1.0 : 1.0;
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 0x1f) {
    return mantissa == 0 ? sign * std::numeric_limits<double>::infinity()
                         : std::numeric_limits<double>::quiet_NaN();
  }
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

bool is_half_nan(std::uint16_t bits) {
  return (bits & 0x7c00u) == 0x7c00u && (bits & 0x3ffu) != 0;
}

TEST(HalfTest, EveryFloat16WidensExactlyAndNarrowsBack) {
  for (std::uint32_t pattern = 0; pattern < 0x10000; ++pattern) {
    const auto bits = static_cast<std::uint16_t>(pattern);
    const float widened = float16_to_float(bits);
    if (is_half_nan(bits)) {
      ASSERT_TRUE(std::isnan(widened)) << std::hex << pattern;
      // NaN stays NaN, with its sign; the payload need not survive.
      ASSERT_TRUE(is_half_nan(float_to_float16(widened))) << std::hex << pattern;
      ASSERT_EQ(float_to_float16(widened) & 0x8000u, bits & 0x8000u) << std::hex << pattern;
      ASSERT_TRUE(is_half_nan(double_to_float16(widened))) << std::hex << pattern;
      continue;
    }
    ASSERT_EQ(static_cast<double>(widened), decode_half(bits)) << std::hex << pattern;
    ASSERT_EQ(std::signbit(widened), (bits & 0x8000u) != 0) << std::hex << pattern;
    ASSERT_EQ(float_to_float16(widened), bits) << std::hex << pattern;
    ASSERT_EQ(double_to_float16(widened), bits) << std::hex << pattern;
  }
}

TEST(HalfTest, KnownValues) {
  EXPECT_EQ(float16_to_float(0x3c00), 1.0f);
  EXPECT_EQ(float16_to_float(0xc000), -2.0f);
  EXPECT_EQ(float16_to_float(0x7bff), 65504.0f);                  // largest finite
  EXPECT_EQ(float16_to_float(0x0400), std::ldexp(1.0f, -14));     // 6.1035e-05, min normal
  EXPECT_EQ(float16_to_float(0x03ff), std::ldexp(1023.0f, -24));  // max subnormal
  EXPECT_EQ(float16_to_float(0x0001), std::ldexp(1.0f, -24));     // 5.96e-08, min subnormal
  EXPECT_EQ(float16_to_float(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(float16_to_float(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::signbit(float16_to_float(0x8000)));
  EXPECT_EQ(float16_to_float(0x8000), 0.0f);

  EXPECT_EQ(float_to_float16(65504.0f), 0x7bffu);
  EXPECT_EQ(float_to_float16(6.1035156e-05f), 0x0400u);
  EXPECT_EQ(float_to_float16(5.9604645e-08f), 0x0001u);
  EXPECT_EQ(float_to_float16(-0.0f), 0x8000u);
  EXPECT_EQ(float_to_float16(0.1f), 0x2e66u);
}

TEST(HalfTest, NarrowingOverflowsToInfinityFromTheHalfwayPoint) {
  EXPECT_EQ(float_to_float16(65519.99f), 0x7bffu);
  EXPECT_EQ(float_to_float16(65520.0f), 0x7c00u);  // halfway to 65536: ties to even, i.e. Inf
  EXPECT_EQ(float_to_float16(-65520.0f), 0xfc00u);
  EXPECT_EQ(float_to_float16(1e10f), 0x7c00u);
  EXPECT_EQ(double_to_float16(1e300), 0x7c00u);
  EXPECT_EQ(float_to_float16(std::numeric_limits<float>::infinity()), 0x7c00u);
  EXPECT_EQ(float_to_float16(-std::numeric_limits<float>::infinity()), 0xfc00u);
}

TEST(HalfTest, NarrowingRoundsToNearestEven) {
  const auto at_one = [](double ulps_of_2_11) { return 1.0 + std::ldexp(ulps_of_2_11, -11); };
  EXPECT_EQ(double_to_float16(at_one(1)), 0x3c00u);  // tie: 1.0 is even
  EXPECT_EQ(double_to_float16(at_one(3)), 0x3c02u);  // tie: mantissa 2 is even
  EXPECT_EQ(double_to_float16(at_one(1.001)), 0x3c01u);
  EXPECT_EQ(double_to_float16(at_one(0.999)), 0x3c00u);
  // Subnormals, in units of 2^-24.
  EXPECT_EQ(double_to_float16(std::ldexp(0.5, -24)), 0x0000u);  // tie: 0 is even
  EXPECT_EQ(double_to_float16(std::ldexp(1.5, -24)), 0x0002u);  // tie: 2 is even
  EXPECT_EQ(double_to_float16(std::ldexp(0.51, -24)), 0x0001u);
  EXPECT_EQ(double_to_float16(-std::ldexp(0.49, -24)), 0x8000u);  // underflow keeps the sign
  // Halfway between the largest subnormal and the smallest normal: the normal is even.
  EXPECT_EQ(double_to_float16(std::ldexp(1023.5, -24)), 0x0400u);
  EXPECT_EQ(double_to_float16(1e-10), 0x0000u);
}

TEST(HalfTest, DoubleNarrowsInOneRounding) {
  // Just above a tie: through float the 2^-40 would be lost and the tie would go to even.
  const double above_tie = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(double_to_float16(above_tie), 0x3c01u);
  EXPECT_EQ(float_to_float16(static_cast<float>(above_tie)), 0x3c00u);
}

TEST(HalfTest, NaNNarrowsToNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(is_half_nan(float_to_float16(nan)));
  EXPECT_TRUE(is_half_nan(float_to_float16(-nan)));
  EXPECT_EQ(float_to_float16(-nan) & 0x8000u, 0x8000u);
  EXPECT_TRUE(is_half_nan(double_to_float16(std::numeric_limits<double>::quiet_NaN())));
}

TEST(BFloat16Test, EveryBFloat16WidensExactlyAndNarrowsBack) {
  for (std::uint32_t pattern = 0; pattern < 0x10000; ++pattern) {
    const auto bits = static_cast<std::uint16_t>(pattern);
    const float widened = bfloat16_to_float(bits);
    ASSERT_EQ(std::bit_cast<std::uint32_t>(widened), pattern << 16) << std::hex << pattern;
    if (std::isnan(widened)) {
      ASSERT_TRUE(std::isnan(bfloat16_to_float(float_to_bfloat16(widened)))) << std::hex << pattern;
    } else {
      ASSERT_EQ(float_to_bfloat16(widened), bits) << std::hex << pattern;
    }
  }
}

TEST(BFloat16Test, NarrowingRoundsToNearestEven) {
  EXPECT_EQ(bfloat16_to_float(0x3f80), 1.0f);
  EXPECT_EQ(bfloat16_to_float(0x4049), 3.140625f);
  EXPECT_EQ(float_to_bfloat16(1.0f + std::ldexp(1.0f, -8)), 0x3f80u);      // tie: even
  EXPECT_EQ(float_to_bfloat16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82u);  // tie: even
  EXPECT_EQ(float_to_bfloat16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3f81u);
  EXPECT_EQ(float_to_bfloat16(std::numeric_limits<float>::max()), 0x7f80u);  // rounds to Inf
  EXPECT_EQ(float_to_bfloat16(-std::numeric_limits<float>::infinity()), 0xff80u);
  // A signalling-looking NaN whose payload sits in the dropped bits must stay NaN.
  EXPECT_TRUE(std::isnan(bfloat16_to_float(float_to_bfloat16(std::bit_cast<float>(0x7f800001u)))));
}

}  // namespace
}  // namespace rulestream
