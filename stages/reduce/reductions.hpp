#pragma once

#include "core/model/reduction.hpp"
#include "core/model/reduction_set.hpp"
#include "core/model/tensor_value.hpp"

namespace rulestream {

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
