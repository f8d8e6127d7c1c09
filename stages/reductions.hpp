#pragma once

#include <array>
#include <optional>

#include "pipeline/reduction.hpp"
#include "pipeline/tensor_value.hpp"

namespace rulestream {

// Every reduction of one tensor (plain and abs), or why one cannot be had.
class ReductionSet {
 public:
  const std::optional<Scalar>& get(ReductionKey key) const { return values_[key.index()]; }
  void set(ReductionKey key, Scalar value) { values_[key.index()] = value; }

 private:
  std::array<std::optional<Scalar>, kReductionKeyCount> values_{};
};

// Computes all eighteen reductions in one pass over the elements.
//
// Semantics (smdebug computes reductions on read with numpy; we follow it except where
// FORMAT.md lists a deliberate difference):
// - result dtypes as numpy: the tensor's dtype for floating tensors; for integers min/max keep
//   the dtype, mean/std/variance/l1/l2 are float64, sum/prod int64 (uint64 for unsigned);
//   bool min/max are bool, sum/prod int64, the rest float64;
// - std and variance are population figures (ddof = 0);
// - l1 and l2 are element-wise vector norms whatever the rank;
// - NaN propagates into every reduction but l1/l2 of abs... (NaN in, NaN out, as numpy);
// - integer sum and prod that would overflow int64 come back as float64 instead of wrapping;
// - float16/bfloat16 are accumulated in double and rounded to the dtype once;
// - empty tensors: sum 0, prod 1, l1/l2 0, mean/std/variance NaN, min/max absent.
// Strings and complex values have no reductions (every entry absent).
ReductionSet compute_reductions(const TensorValue& value);

// One reduction. Throws ReductionUnsupported (naming the dtype) when it cannot be had.
Scalar compute_reduction(const TensorValue& value, ReductionKey key);

}  // namespace rulestream
