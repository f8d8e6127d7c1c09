#include "apps/cli/json_values.hpp"

#include <cmath>

namespace rulestream::cli {

boost::json::value json_number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return value;
}

boost::json::value json_scalar(const Scalar& scalar) {
  const DType dtype = scalar.dtype();
  if (dtype == DType::Bool) return scalar.as_uint() != 0;
  if (is_signed_integer(dtype)) return scalar.as_int();
  if (is_unsigned_integer(dtype)) return scalar.as_uint();
  return json_number(scalar.as_double());
}

boost::json::array json_shape(const Shape& shape) {
  boost::json::array dims;
  for (const auto dim : shape) dims.push_back(dim);
  return dims;
}

}  // namespace rulestream::cli
