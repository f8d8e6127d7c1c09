// The element counts (zeros, NaN, Inf) the reduction pass takes along, against counts made the
// plain way from the bit patterns (tests/support/reference_counts.hpp).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "stages/reduce/reductions.hpp"
#include "tests/support/reference_counts.hpp"

namespace rulestream {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

ElementCounts counts_of(const TensorValue& value) {
  const auto counts = compute_reductions(value).counts();
  EXPECT_TRUE(counts.has_value()) << dtype_name(value.dtype());
  return counts.value_or(ElementCounts{});
}

TEST(ElementCountsTest, CountsNonFiniteFloat32AndFloat64) {
  const auto f32 =
      TensorValue::from_values<float>(DType::Float32, {5}, {1.0f, kNaN, kInf, -kInf, 0.0f});
  EXPECT_EQ(counts_of(f32), (ElementCounts{.elements = 5, .zeros = 1, .nans = 1, .infs = 2}));
  const auto f64 = TensorValue::from_values<double>(
      DType::Float64, {3}, {std::numeric_limits<double>::quiet_NaN(), -0.0, 1e308});
  EXPECT_EQ(counts_of(f64), (ElementCounts{.elements = 3, .zeros = 1, .nans = 1, .infs = 0}));
}

TEST(ElementCountsTest, CountsHalfPrecisionBitPatterns) {
  // float16: 0x7c00 +Inf, 0xfc00 -Inf, 0x7e00 NaN, 0x7bff the largest finite, 0x0001 subnormal,
  // 0x8000 -0.
  const auto f16 = TensorValue::from_values<std::uint16_t>(
      DType::Float16, {6}, {0x7c00, 0xfc00, 0x7e00, 0x7bff, 0x0001, 0x8000});
  EXPECT_EQ(counts_of(f16), (ElementCounts{.elements = 6, .zeros = 1, .nans = 1, .infs = 2}));
  // bfloat16: 0x7f80 +Inf, 0x7fc0 NaN, 0x7f7f the largest finite, 0x0000 zero.
  const auto bf16 = TensorValue::from_values<std::uint16_t>(DType::BFloat16, {4},
                                                            {0x7f80, 0x7fc0, 0x7f7f, 0x0000});
  EXPECT_EQ(counts_of(bf16), (ElementCounts{.elements = 4, .zeros = 1, .nans = 1, .infs = 1}));
}

TEST(ElementCountsTest, IntegersCountZerosOnlyAndBoolNothing) {
  EXPECT_EQ(counts_of(TensorValue::from_values<std::int8_t>(DType::Int8, {3}, {0, -1, 0})),
            (ElementCounts{.elements = 3, .zeros = 2}));
  EXPECT_EQ(counts_of(TensorValue::from_values<std::int64_t>(DType::Int64, {2}, {0, 5})),
            (ElementCounts{.elements = 2, .zeros = 1}));
  EXPECT_EQ(counts_of(TensorValue::from_values<std::uint8_t>(DType::UInt8, {2}, {0, 255})),
            (ElementCounts{.elements = 2, .zeros = 1}));
  EXPECT_EQ(counts_of(TensorValue::from_values<std::uint64_t>(DType::UInt64, {1}, {0})),
            (ElementCounts{.elements = 1, .zeros = 1}));
  // numpy does not count bool as a number (np.number): elements only.
  EXPECT_EQ(counts_of(TensorValue::from_values<std::uint8_t>(DType::Bool, {2}, {0, 0})),
            (ElementCounts{.elements = 2}));
}

TEST(ElementCountsTest, EmptyTensorsCountNothingAndStringsHaveNoCounts) {
  EXPECT_EQ(counts_of(TensorValue::from_values<double>(DType::Float64, {0}, {})),
            (ElementCounts{.elements = 0, .zeros = 0, .nans = 0, .infs = 0}));
  EXPECT_FALSE(compute_reductions(TensorValue({1}, {"0"})).counts().has_value());
  EXPECT_EQ(compute_reductions(TensorValue({1}, {"0"})).source_dtype(), DType::String);
}

// Random bit patterns (many zeros, NaNs and infinities among them) over several kernel chunks,
// at every alignment, for every dtype the kernels read: the one-pass counts equal the plain ones.
template <typename T>
std::vector<T> random_elements(std::mt19937_64& random, std::size_t count,
                               const std::vector<T>& specials) {
  std::vector<T> elements(count);
  for (auto& element : elements) {
    const auto draw = random();
    if (draw % 3 == 0) {
      element = specials[(draw >> 8) % specials.size()];
    } else {
      const auto bits = random();
      std::memcpy(&element, &bits, sizeof(T));
    }
  }
  return elements;
}

// The elements at `misalign` bytes past an aligned start, as a record's payload can hold them.
template <typename T>
TensorValue misaligned_value(DType dtype, const std::vector<T>& elements, std::size_t misalign) {
  std::vector<std::byte> bytes(misalign + elements.size() * sizeof(T));
  std::memcpy(bytes.data() + misalign, elements.data(), elements.size() * sizeof(T));
  const SharedBytes all = SharedBytes::from_vector(std::move(bytes));
  return TensorValue(dtype, {static_cast<std::int64_t>(elements.size())},
                     all.slice(misalign, elements.size() * sizeof(T)));
}

template <typename T>
void expect_counts_match_reference(DType dtype, const std::vector<T>& specials) {
  std::mt19937_64 random(static_cast<std::uint64_t>(dtype) * 7919u);
  for (const std::size_t count : {std::size_t{1}, std::size_t{2047}, std::size_t{2048},
                                  std::size_t{2049}, std::size_t{10000}}) {
    const std::vector<T> elements = random_elements(random, count, specials);
    for (std::size_t misalign = 0; misalign < 3; ++misalign) {
      const TensorValue value = misaligned_value(dtype, elements, misalign);
      const ElementCounts counts = counts_of(value);
      EXPECT_EQ(counts.elements, static_cast<std::int64_t>(count));
      EXPECT_EQ(counts.zeros, testing::count_zeros(value)) << dtype_name(dtype) << " " << count;
      const auto non_finite = testing::count_non_finite(value);
      EXPECT_EQ(counts.nans, non_finite ? std::optional(non_finite->nan) : std::nullopt);
      EXPECT_EQ(counts.infs, non_finite ? std::optional(non_finite->inf) : std::nullopt);
    }
  }
}

// NaN and Inf are counted by a pass of their own, taken only when the sums show some: a single
// one, of either sign, wherever it falls (first element, inside a chunk, the last element of a
// chunk or of a tail), with or without the other kind, is counted.
TEST(ElementCountsTest, ASingleNonFiniteElementIsCountedWhereverItFalls) {
  for (const std::size_t count :
       {std::size_t{1}, std::size_t{7}, std::size_t{2048}, std::size_t{2049}, std::size_t{5000}}) {
    for (const std::size_t at :
         {std::size_t{0}, count / 2, std::min(count - 1, std::size_t{2047}), count - 1}) {
      for (const float special : {kInf, -kInf, kNaN}) {
        std::vector<float> elements(count);
        for (std::size_t i = 0; i < count; ++i)
          elements[i] = 0.25f * static_cast<float>(i % 9) - 1.0f;
        elements[at] = special;
        const auto value = misaligned_value(DType::Float32, elements, 1);
        const ElementCounts counts = counts_of(value);
        const auto reference = testing::count_non_finite(value);
        ASSERT_TRUE(reference.has_value());
        EXPECT_EQ(counts.nans, reference->nan) << count << " " << at << " " << special;
        EXPECT_EQ(counts.infs, reference->inf) << count << " " << at << " " << special;
        EXPECT_EQ(counts.zeros, testing::count_zeros(value)) << count << " " << at;
        // And with an Inf of the other sign beside a NaN.
        if (std::isnan(special) && count > 1) {
          elements[(at + 1) % count] = -kInf;
          const auto both = counts_of(misaligned_value(DType::Float32, elements, 0));
          EXPECT_EQ(both.nans, 1) << count << " " << at;
          EXPECT_EQ(both.infs, 1) << count << " " << at;
        }
      }
    }
  }
}

TEST(ElementCountsTest, OnePassCountsMatchThePlainCountsForEveryDtype) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  expect_counts_match_reference<float>(DType::Float32, {0.0f, -0.0f, kNaN, kInf, -kInf});
  expect_counts_match_reference<double>(DType::Float64, {0.0, -0.0, nan, inf, -inf});
  expect_counts_match_reference<std::uint16_t>(DType::Float16,
                                               {0x0000, 0x8000, 0x7e00, 0x7c00, 0xfc00, 0x7c01});
  expect_counts_match_reference<std::uint16_t>(DType::BFloat16,
                                               {0x0000, 0x8000, 0x7fc0, 0x7f80, 0xff80, 0x7f81});
  expect_counts_match_reference<std::int8_t>(DType::Int8, {0});
  expect_counts_match_reference<std::int16_t>(DType::Int16, {0});
  expect_counts_match_reference<std::int32_t>(DType::Int32, {0});
  expect_counts_match_reference<std::int64_t>(DType::Int64, {0});
  expect_counts_match_reference<std::uint8_t>(DType::UInt8, {0});
  expect_counts_match_reference<std::uint16_t>(DType::UInt16, {0});
  expect_counts_match_reference<std::uint32_t>(DType::UInt32, {0});
  expect_counts_match_reference<std::uint64_t>(DType::UInt64, {0});
}

}  // namespace
}  // namespace rulestream
