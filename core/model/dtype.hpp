#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace rulestream {

// Element types a saved tensor can have. Names follow numpy, because that is what smdebug users
// see; the on-disk TensorFlow enum is mapped in stages/tf_dtype.hpp.
enum class DType : std::uint8_t {
  Invalid,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Bool,
  String,
  Complex64,
  Complex128,
};

// numpy's name for the dtype ("float32", "uint8", "bool", "str", ...).
std::string_view dtype_name(DType dtype);

// Inverse of dtype_name; also accepts "half", "float", "double" as TensorFlow spells them.
std::optional<DType> dtype_from_name(std::string_view name);

// Bytes per element; 0 for String (variable length) and Invalid.
std::size_t dtype_size(DType dtype);

bool is_floating(DType dtype);          // float16, bfloat16, float32, float64
bool is_signed_integer(DType dtype);    // int8 .. int64
bool is_unsigned_integer(DType dtype);  // uint8 .. uint64
bool is_complex(DType dtype);
inline bool is_integer(DType dtype) {
  return is_signed_integer(dtype) || is_unsigned_integer(dtype);
}
// Numbers that reductions understand: floating, integer and bool (not strings, not complex).
inline bool is_real_numeric(DType dtype) {
  return is_floating(dtype) || is_integer(dtype) || dtype == DType::Bool;
}

}  // namespace rulestream
