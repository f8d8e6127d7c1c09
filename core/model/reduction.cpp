#include "core/model/reduction.hpp"

#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/model/half.hpp"

namespace rulestream {

std::string_view reduction_name(Reduction reduction) {
  switch (reduction) {
    case Reduction::Min:
      return "min";
    case Reduction::Max:
      return "max";
    case Reduction::Mean:
      return "mean";
    case Reduction::Prod:
      return "prod";
    case Reduction::Std:
      return "std";
    case Reduction::Variance:
      return "variance";
    case Reduction::Sum:
      return "sum";
    case Reduction::L1:
      return "l1";
    case Reduction::L2:
      return "l2";
  }
  return "min";
}

std::string reduction_key_name(ReductionKey key) {
  return (key.abs ? "abs_" : "") + std::string(reduction_name(key.reduction));
}

std::optional<Reduction> reduction_from_name(std::string_view name) {
  if (name == "l1_norm") return Reduction::L1;
  if (name == "l2_norm") return Reduction::L2;
  for (const Reduction reduction : kAllReductions) {
    if (reduction_name(reduction) == name) return reduction;
  }
  return std::nullopt;
}

std::optional<ReductionKey> reduction_key_from_name(std::string_view name) {
  bool abs = false;
  if (name.starts_with("abs_")) {
    abs = true;
    name.remove_prefix(4);
  }
  const auto reduction = reduction_from_name(name);
  if (!reduction) return std::nullopt;
  return ReductionKey{*reduction, abs};
}

Scalar Scalar::of_double(DType dtype, double value) {
  if (!is_floating(dtype)) {
    throw std::invalid_argument("Scalar::of_double: " + std::string(dtype_name(dtype)) +
                                " is not a floating dtype");
  }
  Scalar scalar;
  scalar.dtype_ = dtype;
  // Store what the dtype can hold, so a float32 scalar reads back as a float32 would.
  switch (dtype) {
    case DType::Float16:
      value = float16_to_float(double_to_float16(value));
      break;
    case DType::BFloat16:
      value = bfloat16_to_float(double_to_bfloat16(value));
      break;
    case DType::Float32:
      value = static_cast<float>(value);
      break;
    default:
      break;
  }
  scalar.bits_ = std::bit_cast<std::uint64_t>(value);
  return scalar;
}

Scalar Scalar::of_int(DType dtype, std::int64_t value) {
  if (!is_signed_integer(dtype)) {
    throw std::invalid_argument("Scalar::of_int: " + std::string(dtype_name(dtype)) +
                                " is not a signed integer dtype");
  }
  Scalar scalar;
  scalar.dtype_ = dtype;
  scalar.bits_ = static_cast<std::uint64_t>(value);
  return scalar;
}

Scalar Scalar::of_uint(DType dtype, std::uint64_t value) {
  if (!is_unsigned_integer(dtype)) {
    throw std::invalid_argument("Scalar::of_uint: " + std::string(dtype_name(dtype)) +
                                " is not an unsigned integer dtype");
  }
  Scalar scalar;
  scalar.dtype_ = dtype;
  scalar.bits_ = value;
  return scalar;
}

Scalar Scalar::of_bool(bool value) {
  Scalar scalar;
  scalar.dtype_ = DType::Bool;
  scalar.bits_ = value ? 1 : 0;
  return scalar;
}

Scalar Scalar::from_bits(DType dtype, std::uint64_t bits) {
  Scalar scalar;
  scalar.dtype_ = dtype;
  scalar.bits_ = bits;
  return scalar;
}

double Scalar::as_double() const {
  if (is_floating(dtype_)) return std::bit_cast<double>(bits_);
  if (is_signed_integer(dtype_)) return static_cast<double>(static_cast<std::int64_t>(bits_));
  return static_cast<double>(bits_);
}

std::int64_t Scalar::as_int() const {
  if (is_floating(dtype_)) return static_cast<std::int64_t>(std::bit_cast<double>(bits_));
  return static_cast<std::int64_t>(bits_);
}

std::uint64_t Scalar::as_uint() const {
  if (is_floating(dtype_)) return static_cast<std::uint64_t>(std::bit_cast<double>(bits_));
  return bits_;
}

bool operator==(const Scalar& a, const Scalar& b) {
  if (a.dtype_ != b.dtype_) return false;
  if (is_floating(a.dtype_)) return a.as_double() == b.as_double();
  return a.bits_ == b.bits_;
}

}  // namespace rulestream
