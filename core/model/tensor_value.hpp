#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/model/dtype.hpp"
#include "core/model/shared_bytes.hpp"

namespace rulestream {

using Shape = std::vector<std::int64_t>;

// Number of elements of a shape (1 for a 0-d scalar).
std::int64_t element_count(const Shape& shape);

// Raw IEEE-754 half and bfloat16 bit patterns; see core/model/half.hpp for conversions.
struct Float16Bits {
  std::uint16_t bits;
};
struct BFloat16Bits {
  std::uint16_t bits;
};

// Read-only access to the elements of a numeric tensor. The bytes may sit at any alignment
// inside the record they were decoded from (zero-copy), so elements are loaded with memcpy,
// which compilers turn into plain (vectorisable) loads.
template <typename T>
class ElementView {
 public:
  ElementView(const std::byte* data, std::size_t count) : data_(data), count_(count) {}
  std::size_t size() const { return count_; }
  T operator[](std::size_t i) const {
    T value;
    std::memcpy(&value, data_ + i * sizeof(T), sizeof(T));
    return value;
  }
  const std::byte* data() const { return data_; }

 private:
  const std::byte* data_;
  std::size_t count_;
};

// A tensor's value: dtype, shape and elements (little-endian, C order), or strings.
// Cheap to copy: the element bytes are shared, never duplicated.
class TensorValue {
 public:
  TensorValue() = default;

  // Numeric tensor over bytes that are already laid out as the dtype wants.
  // Throws std::invalid_argument when the byte count does not match the shape.
  TensorValue(DType dtype, Shape shape, SharedBytes bytes);

  // String tensor (smdebug writes 1-D string tensors for text it saves).
  TensorValue(Shape shape, std::vector<std::string> strings);

  // Builds a numeric tensor from host values (used by the writer, the simulator and tests).
  template <typename T>
  static TensorValue from_values(DType dtype, Shape shape, const std::vector<T>& values) {
    if (sizeof(T) != dtype_size(dtype)) {
      throw std::invalid_argument("TensorValue::from_values: element size does not match dtype");
    }
    std::vector<std::byte> bytes(values.size() * sizeof(T));
    if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    return TensorValue(dtype, std::move(shape), SharedBytes::from_vector(std::move(bytes)));
  }

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  std::int64_t size() const { return count_; }  // number of elements
  bool is_string() const { return dtype_ == DType::String; }

  // Element bytes of a numeric tensor (empty for strings).
  const SharedBytes& bytes() const { return bytes_; }
  const std::vector<std::string>& strings() const;  // throws std::logic_error unless String

  // Typed element access; throws std::logic_error when T does not match the dtype.
  template <typename T>
  ElementView<T> elements() const {
    if (sizeof(T) != dtype_size(dtype_) || !matches<T>()) {
      throw std::logic_error("TensorValue::elements: element type does not match dtype " +
                             std::string(dtype_name(dtype_)));
    }
    return ElementView<T>(bytes_.data(), static_cast<std::size_t>(count_));
  }

  // Element i as a double (float16/bfloat16 converted exactly, bool as 0/1). Numeric only.
  double as_double(std::int64_t index) const;

  // Bitwise equality of dtype, shape and content (NaNs with the same bits compare equal).
  bool identical_to(const TensorValue& other) const;

 private:
  template <typename T>
  bool matches() const {
    if constexpr (std::is_same_v<T, Float16Bits>) return dtype_ == DType::Float16;
    if constexpr (std::is_same_v<T, BFloat16Bits>) return dtype_ == DType::BFloat16;
    if constexpr (std::is_same_v<T, float>) return dtype_ == DType::Float32;
    if constexpr (std::is_same_v<T, double>) return dtype_ == DType::Float64;
    if constexpr (std::is_same_v<T, std::int8_t>) return dtype_ == DType::Int8;
    if constexpr (std::is_same_v<T, std::int16_t>) return dtype_ == DType::Int16;
    if constexpr (std::is_same_v<T, std::int32_t>) return dtype_ == DType::Int32;
    if constexpr (std::is_same_v<T, std::int64_t>) return dtype_ == DType::Int64;
    if constexpr (std::is_same_v<T, std::uint8_t>)
      return dtype_ == DType::UInt8 || dtype_ == DType::Bool;
    if constexpr (std::is_same_v<T, std::uint16_t>) return dtype_ == DType::UInt16;
    if constexpr (std::is_same_v<T, std::uint32_t>) return dtype_ == DType::UInt32;
    if constexpr (std::is_same_v<T, std::uint64_t>) return dtype_ == DType::UInt64;
    return false;
  }

  DType dtype_ = DType::Invalid;
  Shape shape_;
  std::int64_t count_ = 0;
  SharedBytes bytes_;
  std::shared_ptr<const std::vector<std::string>> strings_;
};

}  // namespace rulestream
