#pragma once

#include <cstdint>
#include <optional>

#include "core/model/mode.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream {

// A loss-like tensor's value at a step of `mode` (a global step for Mode::Global), or nullopt
// when it was not saved there, saved only as reductions, or is not one real number (a vector,
// a string). Rules that follow scalar series (losses, metrics) skip such steps.
std::optional<double> saved_scalar(const Tensor& tensor, std::int64_t step, Mode mode);

}  // namespace rulestream
