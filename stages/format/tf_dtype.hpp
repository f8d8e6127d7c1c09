#pragma once

#include <optional>

#include "core/model/dtype.hpp"

namespace rulestream {

// TensorFlow's DataType enum values (framework/types.proto) <-> our DType.
std::optional<DType> dtype_from_tf(int tf_dtype);
int tf_from_dtype(DType dtype);  // DT_INVALID (0) for String: smdebug leaves it unset

}  // namespace rulestream
