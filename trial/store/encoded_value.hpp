#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "core/model/dtype.hpp"
#include "core/model/shared_bytes.hpp"
#include "core/model/tensor_value.hpp"
#include "trial/store/record_ref.hpp"

namespace rulestream {

class TrialStore;

// One tensor's value at one step as its record holds it, read but not decoded
// (Trial::encoded_values_at). For rules that compare values across runs or steps: two values
// whose encoded() bytes are equal hold the same dtype, shape and elements, which one memcmp
// tells, where decoding both costs a parse, a shape and an owner each.
// Valid while a handle on its trial lives.
class EncodedValue {
 public:
  // The value's TensorProto message, a view of the record's bytes this holds. Empty when the
  // value came already decoded (a copy the trial's value cache held: decode() returns it).
  std::span<const std::byte> encoded() const { return encoded_; }
  // Whether encoded() was decoded once before without error (the pipeline decoded the record
  // as it landed): bytes equal to it then decode without error too.
  bool checked() const { return checked_; }
  // The dtype the encoding declares (DType::String for strings), read without decoding the
  // rest; nullopt for one this reader does not decode. Throws FormatError as decode() does.
  std::optional<DType> dtype() const;
  // The value, decoded and checked as Tensor::value reads it; a malformed record throws
  // FormatError naming its file, offset and tensor.
  TensorValue decode() const;

 private:
  friend class TrialStore;
  EncodedValue(const TrialStore& store, const RecordRef& record, const std::string& tensor,
               SharedBytes payload, std::span<const std::byte> encoded, bool checked);
  EncodedValue(const TrialStore& store, const RecordRef& record, const std::string& tensor,
               TensorValue decoded);

  const TrialStore* store_;
  RecordRef record_;
  const std::string* tensor_;           // the tensor's name, the store's
  SharedBytes payload_;                 // the Event
  std::span<const std::byte> encoded_;  // its value's TensorProto, within payload_
  bool checked_ = false;
  // A value that came decoded (rare: only copies the value cache holds), apart so that the
  // common encoded case stays small: rules read thousands of these at a time.
  std::shared_ptr<const TensorValue> decoded_;
};

}  // namespace rulestream
