#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "core/model/dtype.hpp"
#include "core/model/reduction.hpp"

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

}  // namespace rulestream
