#include "stages/format/event_codec.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <bit>
#include <boost/container/small_vector.hpp>
#include <charconv>
#include <climits>
#include <cstring>
#include <limits>
#include <span>
#include <stdexcept>
#include <string_view>
#include <type_traits>

#include "core/model/exceptions.hpp"
#include "stages/format/message_reader.hpp"
#include "stages/format/proto/event.pb.h"
#include "stages/format/tf_dtype.hpp"
#include "stages/format/wire_cursor.hpp"

namespace rulestream {
namespace {

// tensor_content and our element views are little-endian; so is every host we build for.
static_assert(std::endian::native == std::endian::little,
              "event_codec assumes a little-endian host (tensor_content is little-endian)");

using wire::ErrorContext;
using wire::fail;
using wire::MessageReader;
using wire::read_repeated;
using wire::WireType;

// Typed values are materialised into a new buffer; a single value broadcast to a huge shape
// must not allocate without bound. 2 GiB is also protobuf's own limit on a message.
constexpr std::uint64_t kMaxMaterialisedBytes = std::uint64_t{1} << 31;
// Typed fields carry every element (a few wire bytes each), except in the one-value broadcast
// TensorFlow allows, where a record may declare far more than it carries: a 38-byte event once
// made the reader allocate 2.37 GB for 13.8 s, on every core that decoded such a record. A
// broadcast fills at most kMaxBroadcastBytes (event_codec.hpp), whatever its record holds:
// scaling the cap with the record's size let 2.1 MB of padding in an unknown field lift it to
// 2 GiB, past any memory budget.
std::uint64_t broadcast_limit() {
  return kMaxBroadcastBytes;
}

// TensorFlow's field numbers (stages/format/proto/event.proto).
namespace field {
constexpr int kEventWallTime = 1;
constexpr int kEventStep = 2;
constexpr int kEventSummary = 5;
constexpr int kSummaryValue = 1;
constexpr int kValueTag = 1;
constexpr int kValueTensor = 8;
constexpr int kValueMetadata = 9;
constexpr int kMetadataPluginData = 1;
constexpr int kPluginName = 1;
constexpr int kPluginContent = 2;
constexpr int kTensorDtype = 1;
constexpr int kTensorShape = 2;
constexpr int kTensorContent = 4;
constexpr int kFloatVal = 5;
constexpr int kDoubleVal = 6;
constexpr int kIntVal = 7;
constexpr int kStringVal = 8;
constexpr int kScomplexVal = 9;
constexpr int kInt64Val = 10;
constexpr int kBoolVal = 11;
constexpr int kDcomplexVal = 12;
constexpr int kHalfVal = 13;
constexpr int kUint32Val = 16;
constexpr int kUint64Val = 17;
constexpr int kShapeDim = 2;
constexpr int kShapeUnknownRank = 3;
constexpr int kDimSize = 1;
}  // namespace field

// The parts of a TensorProto we use, before they become a TensorValue.
struct TensorParts {
  int tf_dtype = 0;
  Shape shape;
  bool has_content = false;
  std::span<const std::byte> content;
  std::vector<float> float_val;
  std::vector<double> double_val;
  std::vector<std::int32_t> int_val;
  std::vector<std::string> string_val;
  std::vector<float> scomplex_val;
  std::vector<std::int64_t> int64_val;
  std::vector<bool> bool_val;
  std::vector<double> dcomplex_val;
  std::vector<std::int32_t> half_val;
  std::vector<std::uint32_t> uint32_val;
  std::vector<std::uint64_t> uint64_val;
};

std::string shape_text(const Shape& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

void parse_dim(std::span<const std::byte> bytes, const ErrorContext& context, Shape& shape) {
  MessageReader reader(bytes, context, "TensorShapeProto.Dim");
  std::int64_t size = 0;
  while (reader.next()) {
    if (reader.field_number() == field::kDimSize) {
      size = static_cast<std::int64_t>(reader.read_varint());
      if (size < 0) reader.fail_field("negative dimension " + std::to_string(size));
    } else {
      reader.skip();
    }
  }
  shape.push_back(size);
}

void parse_shape(std::span<const std::byte> bytes, const ErrorContext& context, Shape& shape) {
  MessageReader reader(bytes, context, "TensorShapeProto");
  while (reader.next()) {
    if (reader.field_number() == field::kShapeDim) {
      parse_dim(reader.read_bytes(), context, shape);
    } else if (reader.field_number() == field::kShapeUnknownRank) {
      if (reader.read_varint() != 0) reader.fail_field("a saved tensor cannot have unknown rank");
    } else {
      reader.skip();
    }
  }
}

TensorParts parse_tensor(std::span<const std::byte> bytes, const ErrorContext& context) {
  TensorParts parts;
  MessageReader reader(bytes, context, "TensorProto");
  while (reader.next()) {
    switch (reader.field_number()) {
      case field::kTensorDtype:
        parts.tf_dtype = static_cast<int>(reader.read_varint());
        break;
      case field::kTensorShape:
        parts.shape.clear();
        parts.shape.reserve(4);  // one allocation for the ranks tensors have
        parse_shape(reader.read_bytes(), context, parts.shape);
        break;
      case field::kTensorContent:
        parts.content = reader.read_bytes();
        parts.has_content = true;
        break;
      case field::kFloatVal:
        read_repeated<float>(reader, parts.float_val);
        break;
      case field::kDoubleVal:
        read_repeated<double>(reader, parts.double_val);
        break;
      case field::kIntVal:
        read_repeated<std::int32_t>(reader, parts.int_val);
        break;
      case field::kStringVal: {
        const auto value = reader.read_bytes();
        parts.string_val.emplace_back(reinterpret_cast<const char*>(value.data()), value.size());
        break;
      }
      case field::kScomplexVal:
        read_repeated<float>(reader, parts.scomplex_val);
        break;
      case field::kInt64Val:
        read_repeated<std::int64_t>(reader, parts.int64_val);
        break;
      case field::kBoolVal:
        read_repeated<bool>(reader, parts.bool_val);
        break;
      case field::kDcomplexVal:
        read_repeated<double>(reader, parts.dcomplex_val);
        break;
      case field::kHalfVal:
        read_repeated<std::int32_t>(reader, parts.half_val);
        break;
      case field::kUint32Val:
        read_repeated<std::uint32_t>(reader, parts.uint32_val);
        break;
      case field::kUint64Val:
        read_repeated<std::uint64_t>(reader, parts.uint64_val);
        break;
      default:
        reader.skip();
    }
  }
  return parts;
}

std::uint64_t checked_element_count(const Shape& shape, const ErrorContext& context) {
  std::uint64_t count = 1;
  for (const auto dim : shape) {
    if (__builtin_mul_overflow(count, static_cast<std::uint64_t>(dim), &count) ||
        count > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail(context, "shape " + shape_text(shape) + " has too many elements");
    }
  }
  return count;
}

// TensorFlow's rule for typed fields: as many values as elements, or one value standing for
// every element (a broadcast constant). `per_element` is 2 for complex (real, imaginary).
template <typename Out, typename In, typename Convert>
SharedBytes materialise(const std::vector<In>& values, std::string_view field_name,
                        std::size_t per_element, std::uint64_t count, DType dtype,
                        const ErrorContext& context, std::uint64_t broadcast_bytes,
                        Convert convert) {
  const std::uint64_t given = values.size() / per_element;
  if (values.size() % per_element != 0 || (given != count && !(given == 1 && count > 1))) {
    fail(context, std::string(field_name) + " holds " + std::to_string(values.size()) +
                      " values for " + std::to_string(count) + " elements of " +
                      std::string(dtype_name(dtype)) + " (expected " +
                      std::to_string(count * per_element) + (count > 1 ? " or one element)" : ")"));
  }
  const std::uint64_t limit = given == count ? kMaxMaterialisedBytes : broadcast_bytes;
  if (count * per_element > limit / sizeof(Out)) {
    fail(context, std::string(field_name) + " broadcast to " + std::to_string(count) +
                      " elements exceeds " + std::to_string(limit) + " bytes");
  }
  std::vector<std::byte> bytes(count * per_element * sizeof(Out));
  std::byte* out = bytes.data();
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::size_t source = given == 1 ? 0 : static_cast<std::size_t>(i) * per_element;
    for (std::size_t part = 0; part < per_element; ++part) {
      const Out value = convert(values[source + part]);
      std::memcpy(out, &value, sizeof(Out));
      out += sizeof(Out);
    }
  }
  return SharedBytes::from_vector(std::move(bytes));
}

template <typename T>
auto narrowing(const ErrorContext& context, std::string_view field_name) {
  return [&context, field_name](auto value) {
    using In = decltype(value);
    if (value < static_cast<In>(std::numeric_limits<T>::min()) ||
        value > static_cast<In>(std::numeric_limits<T>::max())) {
      fail(context, std::string(field_name) + " value " + std::to_string(value) +
                        " is out of range for its dtype");
    }
    return static_cast<T>(value);
  };
}

constexpr auto kSame = [](auto value) { return value; };

SharedBytes typed_bytes(const TensorParts& parts, DType dtype, std::uint64_t count,
                        const ErrorContext& context, std::uint64_t broadcast_bytes) {
  switch (dtype) {
    case DType::Float32:
      return materialise<float>(parts.float_val, "float_val", 1, count, dtype, context,
                                broadcast_bytes, kSame);
    case DType::Float64:
      return materialise<double>(parts.double_val, "double_val", 1, count, dtype, context,
                                 broadcast_bytes, kSame);
    case DType::Int8:
      return materialise<std::int8_t>(parts.int_val, "int_val", 1, count, dtype, context,
                                      broadcast_bytes, narrowing<std::int8_t>(context, "int_val"));
    case DType::Int16:
      return materialise<std::int16_t>(parts.int_val, "int_val", 1, count, dtype, context,
                                       broadcast_bytes,
                                       narrowing<std::int16_t>(context, "int_val"));
    case DType::Int32:
      return materialise<std::int32_t>(parts.int_val, "int_val", 1, count, dtype, context,
                                       broadcast_bytes, kSame);
    case DType::UInt8:
      return materialise<std::uint8_t>(parts.int_val, "int_val", 1, count, dtype, context,
                                       broadcast_bytes,
                                       narrowing<std::uint8_t>(context, "int_val"));
    case DType::UInt16:
      return materialise<std::uint16_t>(parts.int_val, "int_val", 1, count, dtype, context,
                                        broadcast_bytes,
                                        narrowing<std::uint16_t>(context, "int_val"));
    case DType::Int64:
      return materialise<std::int64_t>(parts.int64_val, "int64_val", 1, count, dtype, context,
                                       broadcast_bytes, kSame);
    case DType::UInt32:
      return materialise<std::uint32_t>(parts.uint32_val, "uint32_val", 1, count, dtype, context,
                                        broadcast_bytes, kSame);
    case DType::UInt64:
      return materialise<std::uint64_t>(parts.uint64_val, "uint64_val", 1, count, dtype, context,
                                        broadcast_bytes, kSame);
    case DType::Bool:
      return materialise<std::uint8_t>(
          parts.bool_val, "bool_val", 1, count, dtype, context, broadcast_bytes,
          [](bool value) { return static_cast<std::uint8_t>(value ? 1 : 0); });
    case DType::Float16:
    case DType::BFloat16:
      // half_val holds the 16-bit patterns in int32s.
      return materialise<std::uint16_t>(parts.half_val, "half_val", 1, count, dtype, context,
                                        broadcast_bytes,
                                        narrowing<std::uint16_t>(context, "half_val"));
    case DType::Complex64:
      return materialise<float>(parts.scomplex_val, "scomplex_val", 2, count, dtype, context,
                                broadcast_bytes, kSame);
    case DType::Complex128:
      return materialise<double>(parts.dcomplex_val, "dcomplex_val", 2, count, dtype, context,
                                 broadcast_bytes, kSame);
    case DType::String:
    case DType::Invalid:
      break;
  }
  throw std::logic_error("typed_bytes: not a numeric dtype");
}

TensorValue string_tensor(TensorParts& parts, std::uint64_t count, const ErrorContext& context,
                          std::uint64_t broadcast_bytes) {
  if (parts.has_content && !parts.content.empty()) {
    fail(context, "string tensor carries tensor_content");
  }
  auto& strings = parts.string_val;
  if (strings.size() == 1 && count > 1) {
    std::uint64_t bytes = 0;
    if (__builtin_mul_overflow(count, strings.front().size() + sizeof(std::string), &bytes) ||
        bytes > broadcast_bytes) {
      fail(context, "string_val broadcast to " + std::to_string(count) + " elements is too large");
    }
    strings.assign(count, strings.front());
  }
  if (strings.size() != count) {
    fail(context, "string_val holds " + std::to_string(strings.size()) + " values for shape " +
                      shape_text(parts.shape));
  }
  return TensorValue(std::move(parts.shape), std::move(strings));
}

TensorValue to_tensor_value(TensorParts& parts, const SharedBytes& payload,
                            const ErrorContext& context) {
  const std::uint64_t count = checked_element_count(parts.shape, context);
  // smdebug leaves strings at DT_INVALID; an empty DT_INVALID tensor is an empty string list.
  if (parts.tf_dtype == 7 ||
      (parts.tf_dtype == 0 && !parts.has_content && (!parts.string_val.empty() || count == 0))) {
    return string_tensor(parts, count, context, broadcast_limit());
  }
  const auto dtype = dtype_from_tf(parts.tf_dtype);
  if (!dtype) fail(context, "unsupported TensorFlow dtype " + std::to_string(parts.tf_dtype));

  const std::uint64_t element_size = dtype_size(*dtype);
  // TensorFlow reads tensor_content whenever it is not empty, and the typed fields otherwise.
  if (!parts.content.empty() || (count == 0 && parts.has_content)) {
    const bool overflows = count > std::numeric_limits<std::uint64_t>::max() / element_size;
    const std::uint64_t expected = overflows ? 0 : count * element_size;
    if (overflows || parts.content.size() != expected) {
      fail(context, "tensor_content holds " + std::to_string(parts.content.size()) +
                        " bytes, shape " + shape_text(parts.shape) + " of " +
                        std::string(dtype_name(*dtype)) + " needs " + std::to_string(expected));
    }
    const auto offset = static_cast<std::size_t>(parts.content.data() - payload.data());
    return TensorValue(*dtype, std::move(parts.shape), payload.slice(offset, parts.content.size()));
  }
  if (count == 0) return TensorValue(*dtype, std::move(parts.shape), SharedBytes());
  return TensorValue(*dtype, std::move(parts.shape),
                     typed_bytes(parts, *dtype, count, context, broadcast_limit()));
}

std::int64_t parse_decimal(std::span<const std::byte> content, std::string_view plugin,
                           const ErrorContext& context) {
  const std::string_view text(reinterpret_cast<const char*>(content.data()), content.size());
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
    fail(context, "plugin data '" + std::string(plugin) + "' holds '" + std::string(text) +
                      "', expected a decimal number");
  }
  return value;
}

void parse_plugin_data(std::span<const std::byte> bytes, const ErrorContext& context,
                       DecodedTensor& tensor) {
  MessageReader reader(bytes, context, "SummaryMetadata.PluginData");
  std::span<const std::byte> name;
  std::span<const std::byte> content;
  while (reader.next()) {
    if (reader.field_number() == field::kPluginName) {
      name = reader.read_bytes();
    } else if (reader.field_number() == field::kPluginContent) {
      content = reader.read_bytes();
    } else {
      reader.skip();
    }
  }
  const std::string_view plugin(reinterpret_cast<const char*>(name.data()), name.size());
  if (plugin == "mode") {
    const auto number = parse_decimal(content, plugin, context);
    tensor.mode = mode_from_number(number);
    if (!tensor.mode) {
      fail(context, "plugin data 'mode' holds unknown ModeKeys value " + std::to_string(number));
    }
  } else if (plugin == "mode_step") {
    tensor.mode_step = parse_decimal(content, plugin, context);
  }
  // Other plugins (TensorBoard's scalars, histograms, ...) say nothing about modes.
}

void parse_metadata(std::span<const std::byte> bytes, const ErrorContext& context,
                    DecodedTensor& tensor) {
  MessageReader reader(bytes, context, "SummaryMetadata");
  while (reader.next()) {
    if (reader.field_number() == field::kMetadataPluginData) {
      parse_plugin_data(reader.read_bytes(), context, tensor);
    } else {
      reader.skip();
    }
  }
}

using Spans = boost::container::small_vector<std::span<const std::byte>, 2>;

// The fields of one Summary.Value, not yet decoded. Fields may come in any order; the tensor is
// decoded once the tag is known, so that its errors can name it.
struct ValueFields {
  std::string_view tag;
  std::optional<std::span<const std::byte>> tensor;
  std::size_t tensor_field = 0;  // the payload offset of the tensor field's tag
  Spans metadata;
};

ValueFields read_value_fields(std::span<const std::byte> bytes, const ErrorContext& context) {
  MessageReader reader(bytes, context, "Summary.Value");
  ValueFields fields;
  while (reader.next()) {
    switch (reader.field_number()) {
      case field::kValueTag: {
        const auto tag = reader.read_bytes();
        fields.tag = std::string_view(reinterpret_cast<const char*>(tag.data()), tag.size());
        break;
      }
      case field::kValueTensor:
        fields.tensor_field = reader.field_offset();
        fields.tensor = reader.read_bytes();
        break;
      case field::kValueMetadata:
        fields.metadata.push_back(reader.read_bytes());
        break;
      default:
        reader.skip();
    }
  }
  return fields;
}

// Decodes a value that holds a tensor into `decoded` (all but its name); its mode and mode step
// too when `with_metadata`.
void decode_value(const ValueFields& fields, const SharedBytes& payload, const std::string& where,
                  bool with_metadata, DecodedTensor& decoded) {
  ErrorContext context{where, payload.data(), fields.tag.empty() ? "<no tag>" : fields.tag};
  if (with_metadata) {
    for (const auto& part : fields.metadata) parse_metadata(part, context, decoded);
  }
  auto parts = parse_tensor(*fields.tensor, context);
  decoded.value = to_tensor_value(parts, payload, context);
}

struct EventHeader {
  std::int64_t step = 0;
  double wall_time = 0.0;
};

// Walks an Event: its header, then every Summary.Value in order, handed to `visit` as
// ValueFields until it returns false. Values without a tensor (simple_value, histograms,
// images: not tensors smdebug saves) are passed over.
template <typename Visit>
void walk_event(const SharedBytes& payload, const std::string& where, Visit&& visit) {
  const ErrorContext context{where, payload.data(), {}};
  if (payload.size() > static_cast<std::size_t>(INT_MAX)) {
    fail(context, "event of " + std::to_string(payload.size()) +
                      " bytes exceeds protobuf's 2 GiB message limit");
  }
  EventHeader header;
  Spans summaries;
  MessageReader reader(payload.span(), context, "Event");
  // step may follow the summary on the wire, so summaries are decoded after the whole Event.
  while (reader.next()) {
    switch (reader.field_number()) {
      case field::kEventWallTime:
        header.wall_time = reader.read_double();
        break;
      case field::kEventStep:
        header.step = static_cast<std::int64_t>(reader.read_varint());
        break;
      case field::kEventSummary:
        summaries.push_back(reader.read_bytes());
        break;
      default:
        reader.skip();
    }
  }
  for (const auto& summary : summaries) {
    MessageReader values(summary, context, "Summary");
    while (values.next()) {
      if (values.field_number() != field::kSummaryValue) {
        values.skip();
        continue;
      }
      const ValueFields fields = read_value_fields(values.read_bytes(), context);
      if (fields.tensor && !visit(header, fields)) return;
    }
  }
}

}  // namespace

std::vector<DecodedTensor> decode_event(const SharedBytes& payload, const std::string& where) {
  std::vector<DecodedTensor> tensors;
  walk_event(payload, where, [&](const EventHeader& header, const ValueFields& fields) {
    DecodedTensor& decoded = tensors.emplace_back();
    decoded.name.assign(fields.tag);
    decoded.step = header.step;
    decoded.wall_time = header.wall_time;
    decode_value(fields, payload, where, true, decoded);
    return true;
  });
  return tensors;
}

std::optional<LocatedTensor> locate_tensor(const SharedBytes& payload, std::string_view tag,
                                           const std::string& where) {
  std::optional<LocatedTensor> found;
  walk_event(payload, where, [&](const EventHeader&, const ValueFields& fields) {
    if (fields.tag != tag) return true;
    // Its name stays empty (the caller knows it), and its mode metadata unread: readers take
    // a record's mode from its index file, as smdebug does (FORMAT.md).
    DecodedTensor decoded;
    decode_value(fields, payload, where, false, decoded);
    // walk_event refused payloads over INT_MAX bytes: the offset fits.
    found =
        LocatedTensor{std::move(decoded.value), static_cast<std::uint32_t>(fields.tensor_field)};
    return false;
  });
  return found;
}

std::optional<TensorValue> decode_tensor(const SharedBytes& payload, std::string_view tag,
                                         const std::string& where) {
  std::optional<LocatedTensor> found = locate_tensor(payload, tag, where);
  if (!found) return std::nullopt;
  return std::move(found->value);
}

std::optional<TensorField> find_tensor_field(const SharedBytes& payload, std::string_view tag,
                                             const std::string& where) {
  std::optional<TensorField> found;
  walk_event(payload, where, [&](const EventHeader&, const ValueFields& fields) {
    if (fields.tag != tag) return true;
    // walk_event refused payloads over INT_MAX bytes: the offset fits.
    found = TensorField{static_cast<std::uint32_t>(fields.tensor_field), *fields.tensor};
    return false;
  });
  return found;
}

std::span<const std::byte> tensor_proto_at(const SharedBytes& payload, std::uint32_t tensor_field,
                                           std::string_view tag, const std::string& where) {
  const ErrorContext context{where, payload.data(), tag};
  if (tensor_field == 0 || tensor_field >= payload.size()) {
    fail(context, "no tensor field at payload offset " + std::to_string(tensor_field) + " of " +
                      std::to_string(payload.size()) + " bytes");
  }
  // The field alone, read as the Summary.Value that holds it reads it: the same checks, the
  // same errors, for the bytes from its tag to the end of the payload.
  MessageReader reader(payload.span().subspan(tensor_field), context, "Summary.Value");
  if (!reader.next() || reader.field_number() != field::kValueTensor) {
    fail(context, "no tensor field at payload offset " + std::to_string(tensor_field));
  }
  return reader.read_bytes();
}

std::optional<DType> tensor_proto_dtype(const SharedBytes& payload,
                                        std::span<const std::byte> tensor_proto,
                                        std::string_view tag, const std::string& where) {
  const ErrorContext context{where, payload.data(), tag};
  MessageReader reader(tensor_proto, context, "TensorProto");
  int tf_dtype = 0;  // DT_INVALID when the field is absent, as protobuf reads it
  while (reader.next()) {
    if (reader.field_number() == field::kTensorDtype) {
      tf_dtype = static_cast<int>(reader.read_varint());
    } else {
      reader.skip();  // shape, content, values: each skipped whole by its length
    }
  }
  return dtype_from_tf(tf_dtype);
}

TensorValue decode_tensor_proto(const SharedBytes& payload, std::span<const std::byte> tensor_proto,
                                std::string_view tag, const std::string& where) {
  ValueFields fields;
  fields.tag = tag;
  fields.tensor = tensor_proto;
  DecodedTensor decoded;
  decode_value(fields, payload, where, false, decoded);
  return std::move(decoded.value);
}

TensorValue decode_tensor_at(const SharedBytes& payload, std::uint32_t tensor_field,
                             std::string_view tag, const std::string& where) {
  return decode_tensor_proto(payload, tensor_proto_at(payload, tensor_field, tag, where), tag,
                             where);
}

std::string encode_tensor_event(const std::string& name, const TensorValue& value,
                                std::int64_t step, Mode mode, std::int64_t mode_step,
                                double wall_time) {
  if (value.dtype() == DType::Invalid) {
    throw std::invalid_argument("encode_tensor_event: tensor '" + name + "' has no value");
  }
  tfproto::Event event;
  event.set_wall_time(wall_time);
  event.set_step(step);  // proto3 leaves 0 out, as smdebug's records do
  auto* summary_value = event.mutable_summary()->add_value();
  summary_value->set_tag(name);

  auto* tensor = summary_value->mutable_tensor();
  tensor->set_dtype(static_cast<tfproto::DataType>(tf_from_dtype(value.dtype())));
  // Always present, even without dims: smdebug's 0-d records carry an empty shape ("12 00").
  auto* shape = tensor->mutable_tensor_shape();
  for (const auto size : value.shape()) {
    auto* dim = shape->add_dim();
    dim->set_size(size);
    dim->set_name(name + "_" + std::to_string(size));
  }
  if (value.is_string()) {
    for (const auto& text : value.strings()) tensor->add_string_val(text);
  } else {
    tensor->set_tensor_content(std::string(value.bytes().as_string_view()));
  }

  auto* metadata = summary_value->mutable_metadata();
  auto* mode_step_data = metadata->add_plugin_data();
  mode_step_data->set_plugin_name("mode_step");
  mode_step_data->set_content(std::to_string(mode_step));
  auto* mode_data = metadata->add_plugin_data();
  mode_data->set_plugin_name("mode");
  mode_data->set_content(std::to_string(static_cast<int>(mode)));

  // Sized up front and written in one pass. Deterministic output only matters for maps, which
  // these messages have none of; it is asked for so that the bytes stay stable if one comes.
  const std::size_t size = event.ByteSizeLong();
  if (size > static_cast<std::size_t>(INT_MAX)) {
    throw std::invalid_argument("encode_tensor_event: tensor '" + name + "' makes an event of " +
                                std::to_string(size) + " bytes, over protobuf's 2 GiB limit");
  }
  std::string bytes(size, '\0');
  google::protobuf::io::ArrayOutputStream array(bytes.data(), static_cast<int>(size));
  google::protobuf::io::CodedOutputStream output(&array);
  output.SetSerializationDeterministic(true);
  event.SerializeWithCachedSizes(&output);
  if (output.HadError()) {
    throw std::runtime_error("encode_tensor_event: cannot serialise tensor '" + name + "'");
  }
  return bytes;
}

}  // namespace rulestream
