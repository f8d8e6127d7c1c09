#include "core/memory/packed_reductions.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/model/half.hpp"
#include "core/model/tensor_value.hpp"
#include "stages/reduce/reductions.hpp"

namespace rulestream {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Every entry the same: dtype and bits (NaN payloads included), counts and source dtype.
void expect_same(const ReductionSet& expected, const PackedReductions& packed,
                 const std::string& what) {
  for (int i = 0; i < kReductionKeyCount; ++i) {
    const ReductionKey key = ReductionKey::from_index(i);
    const auto want = expected.get(key);
    const auto got = packed.get(key);
    ASSERT_EQ(want.has_value(), got.has_value()) << what << " " << reduction_key_name(key);
    if (!want) continue;
    EXPECT_EQ(want->dtype(), got->dtype()) << what << " " << reduction_key_name(key);
    EXPECT_EQ(want->bits(), got->bits()) << what << " " << reduction_key_name(key);
  }
  EXPECT_EQ(expected.counts(), packed.counts()) << what;
  EXPECT_EQ(expected.source_dtype(), packed.source_dtype()) << what;
  const ReductionSet unpacked = packed.unpack();
  for (int i = 0; i < kReductionKeyCount; ++i) {
    const ReductionKey key = ReductionKey::from_index(i);
    const auto want = expected.get(key);
    const auto got = unpacked.get(key);
    ASSERT_EQ(want.has_value(), got.has_value()) << what << " unpacked";
    if (want) {
      EXPECT_EQ(want->bits(), got->bits()) << what << " unpacked";
    }
  }
  EXPECT_EQ(expected.counts(), unpacked.counts()) << what << " unpacked";
  EXPECT_EQ(expected.source_dtype(), unpacked.source_dtype()) << what << " unpacked";

  // Only some keys: those exactly as the whole set has them, no others, counts and dtype whole.
  const std::vector<ReductionKey> some = {{Reduction::Sum, false}, {Reduction::Max, true}};
  const ReductionSet partial = packed.unpack(some);
  for (int i = 0; i < kReductionKeyCount; ++i) {
    const ReductionKey key = ReductionKey::from_index(i);
    const bool asked = std::find(some.begin(), some.end(), key) != some.end();
    const auto want = asked ? expected.get(key) : std::nullopt;
    const auto got = partial.get(key);
    ASSERT_EQ(want.has_value(), got.has_value()) << what << " partly unpacked " << i;
    if (want) {
      EXPECT_EQ(want->dtype(), got->dtype()) << what << " partly unpacked";
      EXPECT_EQ(want->bits(), got->bits()) << what << " partly unpacked";
    }
  }
  EXPECT_EQ(expected.counts(), partial.counts()) << what << " partly unpacked";
  EXPECT_EQ(expected.source_dtype(), partial.source_dtype()) << what << " partly unpacked";
}

TensorValue floats(DType dtype, const std::vector<double>& values) {
  switch (dtype) {
    case DType::Float16: {
      std::vector<std::uint16_t> halves;
      for (double v : values) halves.push_back(double_to_float16(v));
      return TensorValue::from_values(dtype, {static_cast<std::int64_t>(values.size())}, halves);
    }
    case DType::BFloat16: {
      std::vector<std::uint16_t> halves;
      for (double v : values) halves.push_back(double_to_bfloat16(v));
      return TensorValue::from_values(dtype, {static_cast<std::int64_t>(values.size())}, halves);
    }
    case DType::Float32:
      return TensorValue::from_values(dtype, {static_cast<std::int64_t>(values.size())},
                                      std::vector<float>(values.begin(), values.end()));
    default:
      return TensorValue::from_values(dtype, {static_cast<std::int64_t>(values.size())}, values);
  }
}

TEST(PackedReductionsTest, NarrowFloatSetsPackAndComeBackBitForBit) {
  RecordArena arena(4 << 20);
  std::mt19937 random(7);
  std::normal_distribution<double> normal(0.0, 3.0);
  std::vector<double> mixed;
  for (int i = 0; i < 1000; ++i) mixed.push_back(normal(random));
  mixed[10] = 0.0;
  mixed[11] = -0.0;
  const std::vector<std::vector<double>> cases = {
      mixed, {}, {0.0, 0.0}, {1.0, kInf, -2.0}, {1.0, kNaN}, {-kInf}, {65504.0, 1e-7}};
  for (const DType dtype : {DType::Float32, DType::Float16, DType::BFloat16}) {
    for (std::size_t c = 0; c < cases.size(); ++c) {
      const ReductionSet set = compute_reductions(floats(dtype, cases[c]));
      PackedReductions packed;
      packed.assign(set, arena);
      const std::string what = std::string(dtype_name(dtype)) + " case " + std::to_string(c);
      EXPECT_TRUE(packed.packed()) << what;
      expect_same(set, packed, what);
    }
  }
}

TEST(PackedReductionsTest, WideSetsLiveWholeInTheArena) {
  RecordArena arena(4 << 20);
  const std::vector<TensorValue> values = {
      floats(DType::Float64, {1.0, 1e300, -3.5}),
      TensorValue::from_values(DType::Int32, {3}, std::vector<std::int32_t>{1, -7, 40}),
      TensorValue::from_values(DType::Int64, {2}, std::vector<std::int64_t>{1, 1LL << 62}),
      TensorValue::from_values(DType::Bool, {3}, std::vector<std::uint8_t>{1, 0, 1}),
      TensorValue({1}, {"not a number"}),
  };
  for (std::size_t i = 0; i < values.size(); ++i) {
    const ReductionSet set = compute_reductions(values[i]);
    PackedReductions packed;
    packed.assign(set, arena);
    EXPECT_FALSE(packed.packed()) << i;
    expect_same(set, packed, "wide case " + std::to_string(i));
  }
}

TEST(PackedReductionsTest, AnythingAFloatCannotHoldExactlyStaysWhole) {
  RecordArena arena(4 << 20);
  const ReductionSet base = compute_reductions(floats(DType::Float32, {1.0, 2.0, 3.0}));

  ReductionSet other_dtype = base;  // a float64 figure in a float32 tensor's set
  other_dtype.set({Reduction::Mean, false}, Scalar::of_double(DType::Float64, 0.1));
  ReductionSet huge_tensor = base;
  huge_tensor.set_counts({.elements = std::int64_t{5} << 30, .zeros = 0, .nans = 0, .infs = 0});
  ReductionSet no_source = base;
  no_source.set_source_dtype(DType::Invalid);

  for (const ReductionSet* set : {&other_dtype, &huge_tensor, &no_source}) {
    PackedReductions packed;
    packed.assign(*set, arena);
    EXPECT_FALSE(packed.packed());
    expect_same(*set, packed, "unpackable");
  }

  // A NaN with its sign and payload, as arithmetic may leave one, comes back with both.
  ReductionSet odd_nan = base;
  const auto negative_nan = std::bit_cast<std::uint64_t>(
      static_cast<double>(std::bit_cast<float>(std::uint32_t{0xffc00001})));
  odd_nan.set({Reduction::Max, false}, Scalar::from_bits(DType::Float32, negative_nan));
  PackedReductions packed;
  packed.assign(odd_nan, arena);
  EXPECT_TRUE(packed.packed());
  expect_same(odd_nan, packed, "negative NaN");
}

TEST(PackedReductionsTest, ReassigningSwitchesBetweenPackedAndWhole) {
  RecordArena arena(4 << 20);
  const ReductionSet narrow = compute_reductions(floats(DType::Float32, {1.0, -4.0}));
  const ReductionSet wide = compute_reductions(floats(DType::Float64, {1.0, -4.0}));
  PackedReductions packed;
  packed.assign(wide, arena);
  expect_same(wide, packed, "wide first");
  packed.assign(narrow, arena);
  EXPECT_TRUE(packed.packed());
  expect_same(narrow, packed, "narrow after wide");
  packed.assign(wide, arena);
  EXPECT_FALSE(packed.packed());
  expect_same(wide, packed, "wide again");
  EXPECT_EQ(PackedReductions{}.get({Reduction::Min, false}), std::nullopt);
  EXPECT_EQ(PackedReductions{}.counts(), std::nullopt);
}

}  // namespace
}  // namespace rulestream
