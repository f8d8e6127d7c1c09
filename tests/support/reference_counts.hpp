#pragma once

#include <cstdint>
#include <optional>

#include "core/model/tensor_value.hpp"

namespace rulestream::testing {

// Element counts computed the plain way, element by element from the bit patterns, as the
// reference for the counts the reduction kernels take in their one pass (ElementCounts).

struct NonFiniteCount {
  std::int64_t nan = 0;
  std::int64_t inf = 0;  // +Inf and -Inf
};

// NaN and infinite elements of a floating-point value (float16, bfloat16, float32, float64);
// nullopt for every other dtype, which cannot hold them.
std::optional<NonFiniteCount> count_non_finite(const TensorValue& value);

// Elements equal to zero (-0.0 included, NaN not) of an integer or floating-point value, as
// numpy's `v == 0`; nullopt for bool, complex and string values, which numpy does not count as
// numbers (np.number).
std::optional<std::int64_t> count_zeros(const TensorValue& value);

}  // namespace rulestream::testing
