#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "pipeline/reduction.hpp"
#include "pipeline/tensor_value.hpp"

namespace rulestream {

// How many elements a tensor has, and how many of them are zero (-0.0 included, NaN not: numpy's
// `v == 0`), NaN and infinite. `zeros` is absent for bool tensors, which numpy does not count
// as numbers (np.number); `nans` and `infs` are absent for integer and bool tensors, which
// cannot hold them.
struct ElementCounts {
  std::int64_t elements = 0;
  std::optional<std::int64_t> zeros;
  std::optional<std::int64_t> nans;
  std::optional<std::int64_t> infs;

  friend bool operator==(const ElementCounts&, const ElementCounts&) = default;
};

// Every reduction of one tensor (plain and abs), or why one cannot be had, and its element
// counts (absent for strings and complex values, like the reductions).
// Kept for every record of a job (a million and more), so stored compactly: 8 bytes and a dtype
// per reduction rather than an optional Scalar each.
class ReductionSet {
 public:
  std::optional<Scalar> get(ReductionKey key) const {
    const auto i = static_cast<std::size_t>(key.index());
    if (dtypes_[i] == DType::Invalid) return std::nullopt;
    return Scalar::from_bits(dtypes_[i], bits_[i]);
  }
  void set(ReductionKey key, Scalar value) {
    const auto i = static_cast<std::size_t>(key.index());
    dtypes_[i] = value.dtype();
    bits_[i] = value.bits();
  }

  std::optional<ElementCounts> counts() const;
  void set_counts(ElementCounts counts);

  // The dtype of the tensor the set was computed from (Invalid for a set built otherwise).
  DType source_dtype() const { return source_dtype_; }
  void set_source_dtype(DType dtype) { source_dtype_ = dtype; }

 private:
  friend class PackedReductions;  // packs the arrays as they are, for every record of a job

  std::array<std::uint64_t, kReductionKeyCount> bits_{};
  std::array<DType, kReductionKeyCount> dtypes_{};  // Invalid: absent
  DType source_dtype_ = DType::Invalid;
  // ElementCounts without optionals: which of them are present, then the numbers.
  std::uint8_t counts_present_ = 0;  // kHasCounts | kHasZeros | kHasNans | kHasInfs
  std::array<std::int64_t, 4> counts_{};
};

// Computes all eighteen reductions and the element counts in one pass over the elements.
//
// Semantics (smdebug computes reductions on read with numpy; we follow it except where
// FORMAT.md lists a deliberate difference):
// - result dtypes as numpy: the tensor's dtype for floating tensors; for integers min/max keep
//   the dtype, mean/std/variance/l1/l2 are float64, sum/prod int64 (uint64 for unsigned);
//   bool min/max are bool, sum/prod int64, the rest float64;
// - std and variance are population figures (ddof = 0);
// - l1 and l2 are element-wise vector norms whatever the rank;
// - a NaN element makes every reduction NaN, min/max and l1/l2 included (as numpy); Inf follows
//   IEEE as numpy does (mean of [1, inf] is inf, the variance of anything with an Inf is NaN);
// - integer sum and prod are exact while the exact result fits int64 (uint64 for unsigned);
//   when it does not, they come back as float64 instead of wrapping around. Likewise an
//   abs_min/abs_max that does not fit the dtype (|-128| of int8) comes back as float64;
// - bool elements are True for any non-zero byte, as numpy reads them;
// - sums are carried in double and each result is rounded to its dtype once (float16,
//   bfloat16 and float32 included); float64 figures whose double sums overflow (elements
//   beyond ~1e154) are recomputed from scaled elements, so a finite l2, mean or std stays
//   finite where numpy's would be Inf;
// - empty tensors: sum 0, prod 1, l1/l2 0, mean/std/variance NaN, min/max absent.
// Strings and complex values have no reductions (every entry absent).
ReductionSet compute_reductions(const TensorValue& value);

// One reduction. Throws ReductionUnsupported (naming the dtype) when it cannot be had.
Scalar compute_reduction(const TensorValue& value, ReductionKey key);

}  // namespace rulestream
