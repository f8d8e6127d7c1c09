#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/model/dtype.hpp"
#include "stages/reduce/reductions.hpp"

namespace rulestream {

// One worker's share of a tensor at one step: its reductions, how many elements they summarise
// and the tensor's dtype.
struct WorkerReductions {
  ReductionSet reductions;
  // Elements behind `reductions`; nullopt when unknown (a worker that saved only reductions and
  // no shape). Min, max, sum, prod, l1 and l2 combine without it; mean, variance and std cannot.
  std::optional<std::int64_t> count;
  DType dtype = DType::Invalid;
};

// The reductions of the concatenation of every part's elements, from the parts' reductions
// alone (DESIGN.md: assemble "combines per-worker reductions into whole-job figures"):
// min of mins, max of maxes, sum of sums, prod of prods, l1 = sum of l1s, l2 = sqrt(sum of
// l2^2), mean weighted by element count, population variance by the parallel-variance formula
// (M2 = sum(M2_i + n_i * (mean_i - mean)^2), variance = M2 / N), std = sqrt(variance); the abs_
// variants alike from the parts' abs_ figures.
//
// Semantics follow compute_reductions (stages/reduce/reductions.hpp):
// - result dtypes are the ones compute_reductions gives for the parts' dtype: floating dtypes keep
//   theirs (figures are combined in double and rounded once); for integers and bool, min/max
//   keep the extreme part's scalar, sum/prod are exact int64 (uint64 for unsigned) while they
//   fit and float64 beyond, and the rest is float64;
// - a NaN in any part makes that figure NaN;
// - parts with a known count of 0 (empty tensors) add nothing: min/max skip them, and with
//   nothing but empty parts the result is an empty tensor's (sum 0, prod 1, l1/l2 0,
//   mean/std/variance NaN, min/max absent);
// - a figure missing from any part that takes part in it is missing from the result, and so are
//   mean/std/variance when a non-empty part's count is unknown; zero parts: every figure missing;
// - an integer tensor's mean is its exact combined sum over N (as compute_reductions gives it);
//   a floating one's is weighted from the parts' means, so it carries their rounding;
// - a part's variance is taken from its std (squared) when only the std is there;
// - strings and complex values have no reductions (every figure missing).
// Throws std::invalid_argument when parts have different dtypes or a count is negative.
ReductionSet combine_reductions(const std::vector<WorkerReductions>& parts);

}  // namespace rulestream
