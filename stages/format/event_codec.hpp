#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/dtype.hpp"
#include "core/model/mode.hpp"
#include "core/model/shared_bytes.hpp"
#include "core/model/tensor_value.hpp"

namespace rulestream {

// The most a broadcast (one typed value standing for every element of a shape, as TensorFlow
// allows) may fill once decoded; a larger one is refused (FormatError) however large its
// record. Event writers (TensorFlow's summaries, smdebug) store tensor_content or one value per
// element, so only a hostile or broken record meets this: it is what one decoding thread may
// hold beyond the memory budget (--max-memory) while it decodes.
inline constexpr std::uint64_t kMaxBroadcastBytes = std::uint64_t{64} << 20;

// One tensor found in an Event record.
struct DecodedTensor {
  std::string name;  // the Summary.Value tag
  std::int64_t step = 0;
  double wall_time = 0.0;
  std::optional<Mode> mode;               // from the "mode" plugin data, when present
  std::optional<std::int64_t> mode_step;  // from the "mode_step" plugin data, when present
  TensorValue value;
};

// Decodes one Event payload (a TFRecord's data). Numeric data in tensor_content is not copied:
// the returned values share `payload`. Typed repeated fields (float_val, half_val, ...) are
// decoded too, and a single typed value with a larger shape is broadcast as TensorFlow does.
// Events without tensors (file_version, simple_value summaries) yield nothing.
// Malformed data throws FormatError naming `where` (file and offset).
std::vector<DecodedTensor> decode_event(const SharedBytes& payload, const std::string& where);

// The value of the tensor tagged `tag` in one Event payload, decoded and checked as
// decode_event does, or nullopt when the event holds no tensor of that name. For readers that
// know the record from an index: the event's other values are not decoded, no name is copied,
// and the value's mode metadata is not read (the index says the mode, as smdebug's reader
// takes it).
std::optional<TensorValue> decode_tensor(const SharedBytes& payload, std::string_view tag,
                                         const std::string& where);

// decode_tensor's value, and the payload offset of the Summary.Value field that holds it (its
// tag byte): what decode_tensor_at needs to read the same value again.
struct LocatedTensor {
  TensorValue value;
  std::uint32_t tensor_field = 0;
};
std::optional<LocatedTensor> locate_tensor(const SharedBytes& payload, std::string_view tag,
                                           const std::string& where);

// The value locate_tensor found in this payload at `tensor_field`, decoded and checked as
// decode_tensor does, without walking the Event to it: a reader that decoded the record once
// reads it again for a fraction of the cost. `tag` names the tensor in errors only (it is not
// compared). A `tensor_field` that holds no tensor field throws FormatError naming `where`.
TensorValue decode_tensor_at(const SharedBytes& payload, std::uint32_t tensor_field,
                             std::string_view tag, const std::string& where);

// The tensor tagged `tag` in one Event payload, found as locate_tensor finds it but not
// decoded: the payload offset of its Summary.Value tensor field (what tensor_proto_at and
// decode_tensor_at take), and the TensorProto that field holds, a view into `payload`. nullopt
// when the event holds no tensor of that name. The Event is walked and checked as
// locate_tensor walks it.
struct TensorField {
  std::uint32_t offset = 0;
  std::span<const std::byte> tensor_proto;
};
std::optional<TensorField> find_tensor_field(const SharedBytes& payload, std::string_view tag,
                                             const std::string& where);

// The TensorProto message in the tensor field at `tensor_field` (as find_tensor_field or
// locate_tensor gave it), not decoded: a view into `payload`. Two tensor fields whose messages
// hold the same bytes hold the same value. A `tensor_field` that holds no tensor field throws
// FormatError naming `where`, as decode_tensor_at does.
std::span<const std::byte> tensor_proto_at(const SharedBytes& payload, std::uint32_t tensor_field,
                                           std::string_view tag, const std::string& where);

// The dtype a TensorProto (as tensor_proto_at found it in `payload`) declares, read without
// decoding the rest of it: nullopt for a dtype this reader does not decode (DT_INVALID
// included, which is how smdebug writes strings). The message's fields are framed and checked;
// malformed ones throw FormatError naming `where` and `tag`.
std::optional<DType> tensor_proto_dtype(const SharedBytes& payload,
                                        std::span<const std::byte> tensor_proto,
                                        std::string_view tag, const std::string& where);

// The value of a TensorProto as tensor_proto_at found it in `payload`, decoded and checked as
// decode_tensor_at decodes it (tensor_content stays a slice of `payload`).
TensorValue decode_tensor_proto(const SharedBytes& payload, std::span<const std::byte> tensor_proto,
                                std::string_view tag, const std::string& where);

// Encodes a tensor exactly as smdebug's FileWriter does: numeric data raw in tensor_content,
// dims named "<tag>_<size>", plugin data "mode_step" then "mode", strings with dtype left at
// DT_INVALID and one string_val each, step omitted when 0.
std::string encode_tensor_event(const std::string& name, const TensorValue& value,
                                std::int64_t step, Mode mode, std::int64_t mode_step,
                                double wall_time);

}  // namespace rulestream
