#include "core/model/tensor_value.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/model/half.hpp"

namespace rulestream {

std::int64_t element_count(const Shape& shape) {
  // Shapes come from records on disk: a corrupt one must not overflow (undefined behaviour).
  std::int64_t count = 1;
  for (const auto dim : shape) {
    if (dim < 0) throw std::invalid_argument("TensorValue: negative dimension in shape");
    if (__builtin_mul_overflow(count, dim, &count)) {
      throw std::invalid_argument("TensorValue: shape has more than 2^63 elements");
    }
  }
  return count;
}

TensorValue::TensorValue(DType dtype, Shape shape, SharedBytes bytes)
    : dtype_(dtype),
      shape_(std::move(shape)),
      count_(element_count(shape_)),
      bytes_(std::move(bytes)) {
  if (dtype_ == DType::String || dtype_ == DType::Invalid) {
    throw std::invalid_argument("TensorValue: numeric constructor used with dtype " +
                                std::string(dtype_name(dtype_)));
  }
  const std::uint64_t element_size = dtype_size(dtype_);
  const auto count = static_cast<std::uint64_t>(count_);
  if (count > std::numeric_limits<std::uint64_t>::max() / element_size) {
    throw std::invalid_argument("TensorValue: " + std::to_string(count_) + " elements of " +
                                std::string(dtype_name(dtype_)) + " do not fit in memory");
  }
  const std::uint64_t expected = count * element_size;
  if (bytes_.size() != expected) {
    throw std::invalid_argument("TensorValue: " + std::to_string(bytes_.size()) + " bytes for " +
                                std::to_string(count_) + " elements of " +
                                std::string(dtype_name(dtype_)) + " (expected " +
                                std::to_string(expected) + ")");
  }
}

TensorValue::TensorValue(Shape shape, std::vector<std::string> strings)
    : dtype_(DType::String),
      shape_(std::move(shape)),
      count_(element_count(shape_)),
      strings_(std::make_shared<const std::vector<std::string>>(std::move(strings))) {
  if (static_cast<std::size_t>(count_) != strings_->size()) {
    throw std::invalid_argument("TensorValue: " + std::to_string(strings_->size()) +
                                " strings for a shape of " + std::to_string(count_) + " elements");
  }
}

const std::vector<std::string>& TensorValue::strings() const {
  if (!strings_) throw std::logic_error("TensorValue::strings: not a string tensor");
  return *strings_;
}

namespace {

template <typename T>
T load(const std::byte* data, std::int64_t index) {
  T value;
  std::memcpy(&value, data + static_cast<std::size_t>(index) * sizeof(T), sizeof(T));
  return value;
}

}  // namespace

double TensorValue::as_double(std::int64_t index) const {
  if (index < 0 || index >= count_) throw std::out_of_range("TensorValue::as_double: index");
  const std::byte* data = bytes_.data();
  switch (dtype_) {
    case DType::Float16:
      return float16_to_float(load<std::uint16_t>(data, index));
    case DType::BFloat16:
      return bfloat16_to_float(load<std::uint16_t>(data, index));
    case DType::Float32:
      return load<float>(data, index);
    case DType::Float64:
      return load<double>(data, index);
    case DType::Int8:
      return load<std::int8_t>(data, index);
    case DType::Int16:
      return load<std::int16_t>(data, index);
    case DType::Int32:
      return load<std::int32_t>(data, index);
    case DType::Int64:
      return static_cast<double>(load<std::int64_t>(data, index));
    case DType::UInt8:
      return load<std::uint8_t>(data, index);
    case DType::UInt16:
      return load<std::uint16_t>(data, index);
    case DType::UInt32:
      return load<std::uint32_t>(data, index);
    case DType::UInt64:
      return static_cast<double>(load<std::uint64_t>(data, index));
    case DType::Bool:
      return load<std::uint8_t>(data, index) != 0 ? 1.0 : 0.0;
    case DType::Complex64:
    case DType::Complex128:
    case DType::String:
    case DType::Invalid:
      break;
  }
  throw std::logic_error("TensorValue::as_double: not a real number dtype (" +
                         std::string(dtype_name(dtype_)) + ")");
}

bool TensorValue::identical_to(const TensorValue& other) const {
  if (dtype_ != other.dtype_ || shape_ != other.shape_) return false;
  if (dtype_ == DType::String) return strings() == other.strings();
  return bytes_.size() == other.bytes_.size() &&
         std::equal(bytes_.span().begin(), bytes_.span().end(), other.bytes_.span().begin());
}

}  // namespace rulestream
