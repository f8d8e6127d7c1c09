#include "rules/value_closeness.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace rulestream {

Closeness compare_values(const TensorValue& a, const TensorValue& b, const Tolerance& tolerance) {
  for (const TensorValue* value : {&a, &b}) {
    if (value->is_string() || !is_real_numeric(value->dtype())) {
      throw std::invalid_argument("compare_values: " + std::string(dtype_name(value->dtype())) +
                                  " values are not real numbers");
    }
  }
  Closeness result;
  if (a.shape() != b.shape()) {
    result.same_shape = false;
    return result;
  }
  for (std::int64_t i = 0; i < a.size(); ++i) {
    const double x = a.as_double(i);
    const double y = b.as_double(i);
    bool close = false;
    if (std::isnan(x) || std::isnan(y)) {
      close = tolerance.equal_nan && std::isnan(x) && std::isnan(y);
    } else if (std::isinf(x) || std::isinf(y)) {
      close = x == y;
    } else {
      const double difference = std::fabs(x - y);
      result.max_abs_difference = std::max(result.max_abs_difference, difference);
      close = difference <= tolerance.atol + tolerance.rtol * std::fabs(y);
    }
    if (!close) ++result.differing;
  }
  return result;
}

}  // namespace rulestream
