#include "rules/support/real_values.hpp"

#include "core/model/half.hpp"

namespace rulestream {
namespace {

template <typename T, typename Convert>
std::vector<double> convert_all(const TensorValue& value, Convert convert) {
  const auto elements = value.elements<T>();
  std::vector<double> out(elements.size());
  for (std::size_t i = 0; i < elements.size(); ++i) out[i] = convert(elements[i]);
  return out;
}

template <typename T>
std::vector<double> widen(const TensorValue& value) {
  return convert_all<T>(value, [](T x) { return static_cast<double>(x); });
}

}  // namespace

std::optional<std::vector<double>> real_values(const TensorValue& value) {
  switch (value.dtype()) {
    case DType::Float16:
      return convert_all<Float16Bits>(
          value, [](Float16Bits x) { return static_cast<double>(float16_to_float(x.bits)); });
    case DType::BFloat16:
      return convert_all<BFloat16Bits>(
          value, [](BFloat16Bits x) { return static_cast<double>(bfloat16_to_float(x.bits)); });
    case DType::Float32:
      return widen<float>(value);
    case DType::Float64:
      return widen<double>(value);
    case DType::Int8:
      return widen<std::int8_t>(value);
    case DType::Int16:
      return widen<std::int16_t>(value);
    case DType::Int32:
      return widen<std::int32_t>(value);
    case DType::Int64:
      return widen<std::int64_t>(value);
    case DType::UInt8:
      return widen<std::uint8_t>(value);
    case DType::UInt16:
      return widen<std::uint16_t>(value);
    case DType::UInt32:
      return widen<std::uint32_t>(value);
    case DType::UInt64:
      return widen<std::uint64_t>(value);
    case DType::Bool:
      // numpy reads any non-zero byte as True.
      return convert_all<std::uint8_t>(value, [](std::uint8_t x) { return x != 0 ? 1.0 : 0.0; });
    default:
      return std::nullopt;
  }
}

}  // namespace rulestream
