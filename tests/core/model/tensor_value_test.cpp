#include "core/model/tensor_value.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace rulestream {
namespace {

SharedBytes zeros(std::size_t size) {
  return SharedBytes::from_vector(std::vector<std::byte>(size));
}

TEST(TensorValueTest, ElementCount) {
  EXPECT_EQ(element_count({}), 1);  // 0-d scalar
  EXPECT_EQ(element_count({7}), 7);
  EXPECT_EQ(element_count({2, 3, 4}), 24);
  EXPECT_EQ(element_count({5, 0, 3}), 0);
  EXPECT_THROW(element_count({-1}), std::invalid_argument);
  // A corrupt shape must not overflow.
  EXPECT_THROW(element_count({std::int64_t{1} << 32, std::int64_t{1} << 32}),
               std::invalid_argument);
  EXPECT_THROW(element_count({std::numeric_limits<std::int64_t>::max(), 2}), std::invalid_argument);
}

TEST(TensorValueTest, NumericConstructorChecksTheByteCount) {
  const TensorValue value(DType::Float32, {2, 3}, zeros(24));
  EXPECT_EQ(value.dtype(), DType::Float32);
  EXPECT_EQ(value.size(), 6);
  EXPECT_EQ(value.shape(), (Shape{2, 3}));
  EXPECT_FALSE(value.is_string());
  EXPECT_EQ(TensorValue(DType::Int8, {}, zeros(1)).size(), 1);
  EXPECT_EQ(TensorValue(DType::Float64, {0, 4}, zeros(0)).size(), 0);

  EXPECT_THROW(TensorValue(DType::Float32, {2, 3}, zeros(23)), std::invalid_argument);
  EXPECT_THROW(TensorValue(DType::Float16, {3}, zeros(3)), std::invalid_argument);
  EXPECT_THROW(TensorValue(DType::Float32, {-2, -3}, zeros(24)), std::invalid_argument);
  EXPECT_THROW(TensorValue(DType::Complex128, {std::int64_t{1} << 61}, zeros(0)),
               std::invalid_argument);
  EXPECT_THROW(TensorValue(DType::String, {1}, zeros(0)), std::invalid_argument);
  EXPECT_THROW(TensorValue(DType::Invalid, {1}, zeros(0)), std::invalid_argument);
  try {
    TensorValue(DType::Int32, {3}, zeros(8));
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("8 bytes for 3 elements of int32"), std::string::npos)
        << error.what();
  }
}

TEST(TensorValueTest, FromValuesChecksTheElementSize) {
  const auto value = TensorValue::from_values<double>(DType::Float64, {2}, {1.5, -2.5});
  EXPECT_EQ(value.as_double(1), -2.5);
  EXPECT_THROW(TensorValue::from_values<float>(DType::Float64, {2}, {1.5f, 2.5f}),
               std::invalid_argument);
  EXPECT_THROW(TensorValue::from_values<double>(DType::Float64, {3}, {1.5, 2.5}),
               std::invalid_argument);
}

TEST(TensorValueTest, StringTensors) {
  const TensorValue value(Shape{2}, {"alpha", "beta"});
  EXPECT_TRUE(value.is_string());
  EXPECT_EQ(value.dtype(), DType::String);
  EXPECT_EQ(value.size(), 2);
  EXPECT_EQ(value.strings(), (std::vector<std::string>{"alpha", "beta"}));
  EXPECT_TRUE(value.bytes().empty());
  EXPECT_THROW(TensorValue(Shape{3}, {"a"}), std::invalid_argument);
  EXPECT_THROW(TensorValue(Shape{-1, -1}, {"a"}), std::invalid_argument);
  EXPECT_THROW(value.as_double(0), std::logic_error);
  EXPECT_THROW(TensorValue(DType::UInt8, {1}, zeros(1)).strings(), std::logic_error);
}

TEST(TensorValueTest, TypedElementsCheckTheDtype) {
  const auto value = TensorValue::from_values<std::int32_t>(DType::Int32, {3}, {1, -2, 3});
  const auto elements = value.elements<std::int32_t>();
  ASSERT_EQ(elements.size(), 3u);
  EXPECT_EQ(elements[1], -2);
  EXPECT_THROW(value.elements<float>(), std::logic_error);  // same size, other dtype
  EXPECT_THROW(value.elements<std::int64_t>(), std::logic_error);
  const auto flags = TensorValue::from_values<std::uint8_t>(DType::Bool, {2}, {0, 1});
  EXPECT_EQ(flags.elements<std::uint8_t>()[1], 1);
  const auto halves =
      TensorValue::from_values<std::uint16_t>(DType::Float16, {1}, {std::uint16_t{0x3c00}});
  EXPECT_EQ(halves.elements<Float16Bits>()[0].bits, 0x3c00);
  EXPECT_THROW(halves.elements<BFloat16Bits>(), std::logic_error);
}

TEST(TensorValueTest, ElementsReadUnalignedBytes) {
  std::vector<std::byte> bytes(1 + 3 * sizeof(double));
  const double values[3] = {0.25, -8.0, 1e300};
  std::memcpy(bytes.data() + 1, values, sizeof(values));
  const auto owner = SharedBytes::from_vector(std::move(bytes));
  const TensorValue value(DType::Float64, {3}, owner.slice(1, 3 * sizeof(double)));
  EXPECT_EQ(value.elements<double>()[2], 1e300);
  EXPECT_EQ(value.as_double(1), -8.0);
}

TEST(TensorValueTest, AsDoubleForEveryDtype) {
  EXPECT_EQ(
      TensorValue::from_values<std::uint16_t>(DType::Float16, {2}, {0x3c00, 0xc500}).as_double(1),
      -5.0);
  EXPECT_EQ(TensorValue::from_values<std::uint16_t>(DType::Float16, {1}, {0x0001}).as_double(0),
            std::ldexp(1.0, -24));
  EXPECT_EQ(TensorValue::from_values<std::uint16_t>(DType::BFloat16, {1}, {0x4049}).as_double(0),
            3.140625);
  EXPECT_EQ(TensorValue::from_values<float>(DType::Float32, {1}, {0.1f}).as_double(0),
            static_cast<double>(0.1f));
  EXPECT_EQ(TensorValue::from_values<double>(DType::Float64, {1}, {-1e-300}).as_double(0), -1e-300);
  EXPECT_EQ(TensorValue::from_values<std::int8_t>(DType::Int8, {1}, {-11}).as_double(0), -11.0);
  EXPECT_EQ(TensorValue::from_values<std::int16_t>(DType::Int16, {1}, {-30000}).as_double(0),
            -30000.0);
  EXPECT_EQ(TensorValue::from_values<std::int32_t>(DType::Int32, {1}, {-2000000000}).as_double(0),
            -2e9);
  EXPECT_EQ(TensorValue::from_values<std::int64_t>(DType::Int64, {1}, {std::int64_t{1} << 60})
                .as_double(0),
            std::ldexp(1.0, 60));
  EXPECT_EQ(TensorValue::from_values<std::uint8_t>(DType::UInt8, {1}, {245}).as_double(0), 245.0);
  EXPECT_EQ(TensorValue::from_values<std::uint16_t>(DType::UInt16, {1}, {65535}).as_double(0),
            65535.0);
  EXPECT_EQ(TensorValue::from_values<std::uint32_t>(DType::UInt32, {1}, {4000000000u}).as_double(0),
            4e9);
  EXPECT_EQ(TensorValue::from_values<std::uint64_t>(DType::UInt64, {1}, {std::uint64_t{1} << 63})
                .as_double(0),
            std::ldexp(1.0, 63));
  const auto flags = TensorValue::from_values<std::uint8_t>(DType::Bool, {3}, {0, 1, 2});
  EXPECT_EQ(flags.as_double(0), 0.0);
  EXPECT_EQ(flags.as_double(2), 1.0);  // any non-zero byte is True

  const auto value = TensorValue::from_values<float>(DType::Float32, {2}, {1, 2});
  EXPECT_THROW(value.as_double(2), std::out_of_range);
  EXPECT_THROW(value.as_double(-1), std::out_of_range);
  EXPECT_THROW(TensorValue(DType::Complex64, {1}, zeros(8)).as_double(0), std::logic_error);
}

TEST(TensorValueTest, IdenticalToComparesDtypeShapeAndBits) {
  const auto a = TensorValue::from_values<float>(DType::Float32, {2}, {1.0f, 2.0f});
  EXPECT_TRUE(a.identical_to(TensorValue::from_values<float>(DType::Float32, {2}, {1.0f, 2.0f})));
  EXPECT_FALSE(a.identical_to(TensorValue::from_values<float>(DType::Float32, {2}, {1.0f, 3.0f})));
  EXPECT_FALSE(
      a.identical_to(TensorValue::from_values<float>(DType::Float32, {1, 2}, {1.0f, 2.0f})));
  // Same bytes read as another dtype are a different tensor.
  EXPECT_FALSE(a.identical_to(TensorValue(DType::Int32, {2}, a.bytes())));
  // Bitwise: NaN equals the same NaN, 0.0 differs from -0.0.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const auto with_nan = TensorValue::from_values<float>(DType::Float32, {1}, {nan});
  EXPECT_TRUE(with_nan.identical_to(TensorValue::from_values<float>(DType::Float32, {1}, {nan})));
  const float other_nan = std::bit_cast<float>(std::bit_cast<std::uint32_t>(nan) | 1u);
  EXPECT_FALSE(
      with_nan.identical_to(TensorValue::from_values<float>(DType::Float32, {1}, {other_nan})));
  EXPECT_FALSE(TensorValue::from_values<float>(DType::Float32, {1}, {0.0f})
                   .identical_to(TensorValue::from_values<float>(DType::Float32, {1}, {-0.0f})));

  const TensorValue words(Shape{2}, {"a", "b"});
  EXPECT_TRUE(words.identical_to(TensorValue(Shape{2}, {"a", "b"})));
  EXPECT_FALSE(words.identical_to(TensorValue(Shape{2}, {"a", "c"})));
  EXPECT_FALSE(words.identical_to(a));
}

TEST(TensorValueTest, CopiesShareTheElementBytes) {
  const auto value = TensorValue::from_values<double>(DType::Float64, {3}, {1, 2, 3});
  const TensorValue copy = value;  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_EQ(copy.bytes().data(), value.bytes().data());
  EXPECT_TRUE(copy.identical_to(value));
}

}  // namespace
}  // namespace rulestream
