#include "core/model/dtype.hpp"

#include <array>
#include <utility>

namespace rulestream {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::size_t size;
};

constexpr std::array<DTypeInfo, 17> kDTypes{{
    {DType::Invalid, "invalid", 0},
    {DType::Float16, "float16", 2},
    {DType::BFloat16, "bfloat16", 2},
    {DType::Float32, "float32", 4},
    {DType::Float64, "float64", 8},
    {DType::Int8, "int8", 1},
    {DType::Int16, "int16", 2},
    {DType::Int32, "int32", 4},
    {DType::Int64, "int64", 8},
    {DType::UInt8, "uint8", 1},
    {DType::UInt16, "uint16", 2},
    {DType::UInt32, "uint32", 4},
    {DType::UInt64, "uint64", 8},
    {DType::Bool, "bool", 1},
    {DType::String, "str", 0},
    {DType::Complex64, "complex64", 8},
    {DType::Complex128, "complex128", 16},
}};

const DTypeInfo& info(DType dtype) {
  for (const auto& entry : kDTypes) {
    if (entry.dtype == dtype) return entry;
  }
  return kDTypes[0];
}

}  // namespace

std::string_view dtype_name(DType dtype) {
  return info(dtype).name;
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& entry : kDTypes) {
    if (entry.name == name && entry.dtype != DType::Invalid) return entry.dtype;
  }
  static constexpr std::array<std::pair<std::string_view, DType>, 5> kAliases{{
      {"half", DType::Float16},
      {"float", DType::Float32},
      {"double", DType::Float64},
      {"string", DType::String},
      {"bool_", DType::Bool},
  }};
  for (const auto& [alias, dtype] : kAliases) {
    if (alias == name) return dtype;
  }
  return std::nullopt;
}

std::size_t dtype_size(DType dtype) {
  return info(dtype).size;
}

bool is_floating(DType dtype) {
  return dtype == DType::Float16 || dtype == DType::BFloat16 || dtype == DType::Float32 ||
         dtype == DType::Float64;
}

bool is_signed_integer(DType dtype) {
  return dtype == DType::Int8 || dtype == DType::Int16 || dtype == DType::Int32 ||
         dtype == DType::Int64;
}

bool is_unsigned_integer(DType dtype) {
  return dtype == DType::UInt8 || dtype == DType::UInt16 || dtype == DType::UInt32 ||
         dtype == DType::UInt64;
}

bool is_complex(DType dtype) {
  return dtype == DType::Complex64 || dtype == DType::Complex128;
}

}  // namespace rulestream
