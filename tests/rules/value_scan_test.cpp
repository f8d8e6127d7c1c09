#include "rules/value_scan.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "rules/rule_text.hpp"

namespace rulestream {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(ValueScanTest, CountsNonFiniteFloat32AndFloat64) {
  const auto f32 =
      TensorValue::from_values<float>(DType::Float32, {5}, {1.0f, kNaN, kInf, -kInf, 0.0f});
  ASSERT_TRUE(count_non_finite(f32));
  EXPECT_EQ(count_non_finite(f32)->nan, 1);
  EXPECT_EQ(count_non_finite(f32)->inf, 2);
  const auto f64 = TensorValue::from_values<double>(
      DType::Float64, {3}, {std::numeric_limits<double>::quiet_NaN(), -0.0, 1e308});
  EXPECT_EQ(count_non_finite(f64)->nan, 1);
  EXPECT_EQ(count_non_finite(f64)->inf, 0);
}

TEST(ValueScanTest, CountsNonFiniteHalfPrecisionBitPatterns) {
  // float16: 0x7c00 +Inf, 0xfc00 -Inf, 0x7e00 NaN, 0x7bff the largest finite, 0x0001 subnormal.
  const auto f16 = TensorValue::from_values<std::uint16_t>(
      DType::Float16, {5}, {0x7c00, 0xfc00, 0x7e00, 0x7bff, 0x0001});
  EXPECT_EQ(count_non_finite(f16)->nan, 1);
  EXPECT_EQ(count_non_finite(f16)->inf, 2);
  // bfloat16: 0x7f80 +Inf, 0x7fc0 NaN, 0x7f7f the largest finite.
  const auto bf16 =
      TensorValue::from_values<std::uint16_t>(DType::BFloat16, {3}, {0x7f80, 0x7fc0, 0x7f7f});
  EXPECT_EQ(count_non_finite(bf16)->nan, 1);
  EXPECT_EQ(count_non_finite(bf16)->inf, 1);
}

TEST(ValueScanTest, IntegersCannotBeNonFinite) {
  const auto ints = TensorValue::from_values<std::int32_t>(DType::Int32, {2}, {1, 2});
  EXPECT_FALSE(count_non_finite(ints));
  EXPECT_FALSE(count_non_finite(TensorValue({1}, {"text"})));
}

TEST(ValueScanTest, CountsZerosOfNumbersOnly) {
  const auto f32 =
      TensorValue::from_values<float>(DType::Float32, {5}, {0.0f, -0.0f, kNaN, 1e-45f, 0.0f});
  EXPECT_EQ(count_zeros(f32), 3);
  const auto f16 = TensorValue::from_values<std::uint16_t>(DType::Float16, {4},
                                                           {0x0000, 0x8000, 0x0001, 0x7e00});
  EXPECT_EQ(count_zeros(f16), 2);
  const auto bf16 =
      TensorValue::from_values<std::uint16_t>(DType::BFloat16, {3}, {0x8000, 0x3f80, 0x0000});
  EXPECT_EQ(count_zeros(bf16), 2);
  EXPECT_EQ(count_zeros(TensorValue::from_values<std::int8_t>(DType::Int8, {3}, {0, -1, 0})), 2);
  EXPECT_EQ(count_zeros(TensorValue::from_values<std::int64_t>(DType::Int64, {2}, {0, 5})), 1);
  EXPECT_EQ(count_zeros(TensorValue::from_values<std::uint8_t>(DType::UInt8, {2}, {0, 255})), 1);
  EXPECT_EQ(count_zeros(TensorValue::from_values<std::uint64_t>(DType::UInt64, {1}, {0})), 1);
  EXPECT_EQ(count_zeros(TensorValue::from_values<double>(DType::Float64, {0}, {})), 0);
  // numpy does not count bool as a number (np.number); neither do strings.
  EXPECT_FALSE(count_zeros(TensorValue::from_values<std::uint8_t>(DType::Bool, {2}, {0, 0})));
  EXPECT_FALSE(count_zeros(TensorValue({1}, {"0"})));
}

TEST(RuleTextTest, FormatsFiguresLikePrintfG) {
  EXPECT_EQ(format_figure(3.2e-10), "3.2e-10");
  EXPECT_EQ(format_figure(1e-7), "1e-07");
  EXPECT_EQ(format_figure(0.1), "0.1");
  EXPECT_EQ(format_figure(100.0), "100");
  EXPECT_EQ(format_figure(1.23456789), "1.23457");
  EXPECT_EQ(format_figure(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(format_figure(std::numeric_limits<double>::infinity()), "Infinity");
  EXPECT_EQ(format_figure(-std::numeric_limits<double>::infinity()), "-Infinity");
}

TEST(RuleTextTest, NamesHowManyMoreTensorsAFindingHas) {
  Finding finding;
  EXPECT_EQ(more_tensors_suffix(finding), "");
  finding.tensors = {"a"};
  EXPECT_EQ(more_tensors_suffix(finding), "");
  finding.tensors = {"a", "b"};
  EXPECT_EQ(more_tensors_suffix(finding), " (and 1 more tensor)");
  finding.tensors.assign(kMaxReportedTensors, "t");
  EXPECT_EQ(more_tensors_suffix(finding),
            " (and at least " + std::to_string(kMaxReportedTensors - 1) + " more tensors)");
}

}  // namespace
}  // namespace rulestream
