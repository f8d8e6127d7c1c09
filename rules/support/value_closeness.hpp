#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "core/model/reduction_set.hpp"
#include "core/model/tensor_value.hpp"

namespace rulestream {

// numpy.allclose's tolerances: |a - b| <= atol + rtol * |b|.
struct Tolerance {
  double rtol = 1e-05;
  double atol = 1e-08;
  bool equal_nan = false;
};

// How two values compare element by element, as numpy.allclose sees them (one pass).
struct Closeness {
  bool same_shape = true;           // false: nothing else was compared
  std::int64_t differing = 0;       // elements outside the tolerance (NaN against anything counts)
  double max_abs_difference = 0.0;  // over elements that are both finite
  bool close() const { return same_shape && differing == 0; }
};

// What may_be_close reads of a value's reductions: 48 bytes where a ReductionSet takes about
// 200, for a rule that keeps them for every tensor over several steps (UnchangedTensor).
struct CloseScreen {
  std::optional<std::int64_t> elements;  // absent when the set has no element counts
  bool non_finite = false;               // NaN or Inf elements
  DType dtype = DType::Invalid;          // the value's (ReductionSet::source_dtype)
  std::optional<double> sum;
  std::optional<double> l1;
};
CloseScreen close_screen(const ReductionSet& set);

// False only when two values certainly are not close (numpy.allclose(a, b) is False), judged
// from their reductions alone (close_screen of each value's compute_reductions): different
// element counts, or sums or l1 norms further apart than allclose allows, |sum(a) - sum(b)| or
// |l1(a) - l1(b)| > n * atol + rtol * l1(b), with room for their rounding. True means "compare
// the values". Values with NaN or Inf, or sets without the figures, are always worth comparing.
bool may_be_close(const CloseScreen& a, const CloseScreen& b, const Tolerance& tolerance);
// The reductions may_be_close reads, besides the counts and source dtype: what a rule screening
// every tensor at every step asks Tensor::value_reductions for.
inline constexpr std::array<ReductionKey, 2> kCloseScreenReductions{
    {{Reduction::Sum, false}, {Reduction::L1, false}}};

// Compares two real-numeric values of the same shape (any dtypes: compared as doubles).
// Equal infinities are close, as in numpy. Strings and complex values are not numbers here:
// std::invalid_argument.
Closeness compare_values(const TensorValue& a, const TensorValue& b, const Tolerance& tolerance);

// numpy.allclose(a, b) as compare_values judges it, for a caller that needs no count of the
// differing elements: compare_values(a, b).max_abs_difference when the values are close,
// nullopt as soon as a block of 256 elements holds one that is not (or the shapes differ).
// Throws as compare_values does.
std::optional<double> close_within(const TensorValue& a, const TensorValue& b,
                                   const Tolerance& tolerance);

}  // namespace rulestream
