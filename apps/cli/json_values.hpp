#pragma once

#include <boost/json.hpp>

#include "core/model/reduction.hpp"
#include "core/model/tensor_value.hpp"

namespace rulestream::cli {

// A number as JSON: integers exactly, NaN and infinities as the strings "NaN", "Infinity" and
// "-Infinity" (JSON has no literal for them; smdebug's own dumps use the same strings).
boost::json::value json_number(double value);
boost::json::value json_scalar(const Scalar& scalar);
boost::json::array json_shape(const Shape& shape);

}  // namespace rulestream::cli
