#include "rules/support/saved_scalar.hpp"

#include "core/model/exceptions.hpp"

namespace rulestream {

std::optional<double> saved_scalar(const Tensor& tensor, std::int64_t step, Mode mode) {
  TensorValue value;
  try {
    value = tensor.value(step, mode);
  } catch (const TensorUnavailableForStep&) {
    return std::nullopt;
  }
  if (value.is_string() || value.size() != 1 || !is_real_numeric(value.dtype())) {
    return std::nullopt;
  }
  return value.as_double(0);
}

}  // namespace rulestream
