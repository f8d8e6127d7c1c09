#pragma once

#include <optional>
#include <vector>

#include "core/model/tensor_value.hpp"

namespace rulestream {

// The elements of a real-valued tensor (floating, integer or bool) as doubles, in C order, for
// rules that look at values one by one (percentiles, per-unit activity, element-wise closeness).
// nullopt for strings and complex values, which those rules cannot compare.
std::optional<std::vector<double>> real_values(const TensorValue& value);

}  // namespace rulestream
