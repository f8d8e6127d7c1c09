#pragma once

// Protobuf messages walked field by field over a payload's bytes (wire_cursor.hpp below it),
// with errors that name the file and offset the caller gives and, once known, the value's tag:
// what event_codec.cpp and tensorboard_event.cpp both decode with. Internal to stages/format.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/model/exceptions.hpp"
#include "stages/format/wire_cursor.hpp"

namespace rulestream::wire {

// What every error message needs: the caller's `where`, the payload (to turn pointers into
// offsets) and, once known, the tensor's tag.
struct ErrorContext {
  const std::string& where;
  const std::byte* payload_begin;
  std::string_view tag;
};

[[noreturn]] inline void fail(const ErrorContext& context, const std::string& what) {
  if (context.tag.empty()) throw FormatError(context.where, what);
  throw FormatError(context.where, "tensor '" + std::string(context.tag) + "': " + what);
}

inline std::string_view wire_type_name(WireType type) {
  switch (type) {
    case WireType::Varint:
      return "varint";
    case WireType::Fixed64:
      return "fixed64";
    case WireType::LengthDelimited:
      return "length-delimited";
    case WireType::StartGroup:
      return "start-group";
    case WireType::EndGroup:
      return "end-group";
    case WireType::Fixed32:
      return "fixed32";
  }
  return "unknown";
}

// A scalar of a repeated numeric field as protobuf encodes it: floats and doubles fixed-width,
// the integer types and bool as varints (int32 and uint32 keep the low 32 bits of theirs, as
// protobuf's parser does).
template <typename T>
bool read_scalar_value(wire::Cursor& cursor, T& value) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return cursor.read_fixed(value);
  } else {
    std::uint64_t raw = 0;
    if (!cursor.read_varint(raw)) return false;
    if constexpr (std::is_same_v<T, bool>) {
      value = raw != 0;
    } else {
      value = static_cast<T>(raw);
    }
    return true;
  }
}

template <typename T>
constexpr WireType element_wire_type() {
  if constexpr (std::is_same_v<T, float>) return WireType::Fixed32;
  if constexpr (std::is_same_v<T, double>) return WireType::Fixed64;
  return WireType::Varint;
}

// Walks the fields of one message. Nested messages are handed out as sub-spans of the payload,
// so their bytes stay where they are (tensor_content is never copied) and each message is
// parsed by its own reader once its context (the tag) is known.
class MessageReader {
 public:
  MessageReader(std::span<const std::byte> bytes, const ErrorContext& context,
                std::string_view message)
      : bytes_(bytes), context_(context), message_(message), cursor_(bytes) {}

  // Advances to the next field; false at the end of the message.
  bool next() {
    field_offset_ = absolute_offset();
    if (cursor_.at_end()) return false;
    if (!cursor_.read_tag(tag_) || tag_ == 0) fail_here("malformed field tag");
    field_number_ = static_cast<int>(tag_ >> 3);
    if (field_number_ == 0) fail_here("field number 0");
    return true;
  }

  int field_number() const { return field_number_; }
  // Where the current field's tag sits, counted from the start of the payload.
  std::size_t field_offset() const { return field_offset_; }
  WireType wire_type() const { return static_cast<WireType>(tag_ & 7); }

  void expect(WireType type) const {
    if (wire_type() != type) {
      fail_field("wire type " + std::string(wire_type_name(wire_type())) + ", expected " +
                 std::string(wire_type_name(type)));
    }
  }

  std::span<const std::byte> read_bytes() {
    expect(WireType::LengthDelimited);
    std::span<const std::byte> bytes;
    std::uint64_t length = 0;
    switch (cursor_.read_length_delimited(bytes, length)) {
      case wire::Cursor::BytesStatus::Ok:
        return bytes;
      case wire::Cursor::BytesStatus::TruncatedLength:
        fail_field("truncated length varint");
      case wire::Cursor::BytesStatus::PastEnd:
        break;
    }
    fail_field("length " + std::to_string(length) + " runs past the end of " +
               std::string(message_) + " (" + std::to_string(cursor_.left()) + " bytes left)");
  }

  std::uint64_t read_varint() {
    expect(WireType::Varint);
    std::uint64_t value = 0;
    if (!cursor_.read_varint(value)) fail_field("truncated varint");
    return value;
  }

  double read_double() {
    expect(WireType::Fixed64);
    double value = 0;
    if (!cursor_.read_fixed(value)) fail_field("truncated double");
    return value;
  }

  // One element of a repeated scalar field written unpacked (one tag per element).
  template <typename T>
  T read_scalar() {
    T value{};
    if (!read_scalar_value(cursor_, value)) fail_field("truncated value");
    return value;
  }

  void skip() {
    if (!cursor_.skip(tag_)) fail_field("malformed unknown field");
  }

  [[noreturn]] void fail_field(const std::string& what) const {
    fail(context_, std::string(message_) + " field " + std::to_string(field_number_) +
                       " at payload offset " + std::to_string(field_offset_) + ": " + what);
  }

 private:
  std::size_t absolute_offset() const {
    return static_cast<std::size_t>(bytes_.data() - context_.payload_begin) + cursor_.position();
  }

  [[noreturn]] void fail_here(const std::string& what) const {
    fail(context_, std::string(message_) + " at payload offset " + std::to_string(field_offset_) +
                       ": " + what);
  }

  std::span<const std::byte> bytes_;
  const ErrorContext& context_;
  std::string_view message_;
  wire::Cursor cursor_;
  std::uint32_t tag_ = 0;
  int field_number_ = 0;
  std::size_t field_offset_ = 0;
};

// Appends a repeated scalar field to `out`, packed (one length-delimited run) or unpacked (one
// tag per element): proto3 writers pack, proto2-era writers may not, and parsers must take both.
template <typename T>
void read_repeated(MessageReader& reader, std::vector<T>& out) {
  constexpr WireType kElementWireType = element_wire_type<T>();
  if (reader.wire_type() != WireType::LengthDelimited) {
    reader.expect(kElementWireType);
    out.push_back(reader.template read_scalar<T>());
    return;
  }
  const auto packed = reader.read_bytes();
  if constexpr (kElementWireType != WireType::Varint) {
    if (packed.size() % sizeof(T) != 0) {
      reader.fail_field("packed run of " + std::to_string(packed.size()) +
                        " bytes is not a whole number of " + std::to_string(sizeof(T)) +
                        "-byte values");
    }
    out.reserve(out.size() + packed.size() / sizeof(T));
  } else {
    out.reserve(out.size() + packed.size());  // at most one value per byte
  }
  wire::Cursor input(packed);
  while (!input.at_end()) {
    T value{};
    if (!read_scalar_value(input, value)) reader.fail_field("truncated value in packed run");
    out.push_back(value);
  }
}

}  // namespace rulestream::wire
