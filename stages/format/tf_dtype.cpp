#include "stages/format/tf_dtype.hpp"

#include <array>
#include <utility>

namespace rulestream {
namespace {

// TensorFlow's DataType numbers (framework/types.proto). DT_INT8 maps to Int8: smdebug's reader
// reinterprets it as uint8, which is a bug we do not copy (see FORMAT.md).
constexpr std::array<std::pair<int, DType>, 16> kTfDTypes{{
    {1, DType::Float32},
    {2, DType::Float64},
    {3, DType::Int32},
    {4, DType::UInt8},
    {5, DType::Int16},
    {6, DType::Int8},
    {7, DType::String},
    {8, DType::Complex64},
    {9, DType::Int64},
    {10, DType::Bool},
    {14, DType::BFloat16},
    {17, DType::UInt16},
    {18, DType::Complex128},
    {19, DType::Float16},
    {22, DType::UInt32},
    {23, DType::UInt64},
}};

}  // namespace

std::optional<DType> dtype_from_tf(int tf_dtype) {
  for (const auto& [number, dtype] : kTfDTypes) {
    if (number == tf_dtype) return dtype;
  }
  return std::nullopt;
}

int tf_from_dtype(DType dtype) {
  // smdebug leaves strings at DT_INVALID (proto3 then omits the field); Invalid has no number.
  if (dtype == DType::String) return 0;
  for (const auto& [number, mapped] : kTfDTypes) {
    if (mapped == dtype) return number;
  }
  return 0;
}

}  // namespace rulestream
