#pragma once

// Protobuf's wire format read straight off a byte span, for event_codec.cpp's zero-copy walk.
//
// protobuf's CodedInputStream does the same and more (limits, aliasing, stream refills), but it
// is built for large streams: constructing, reading a tag through its out-of-line fallbacks and
// destroying one cost more than everything else in a small tensor's record, and an Event nests
// nine messages. A record's bytes are all in memory already, so a pointer pair is enough.
// Internal to stages/.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace rulestream::wire {

// The wire types of the tag's low three bits.
enum class WireType : std::uint8_t {
  Varint = 0,
  Fixed64 = 1,
  LengthDelimited = 2,
  StartGroup = 3,
  EndGroup = 4,
  Fixed32 = 5,
};

// Deprecated groups may nest; beyond this depth a message is rejected rather than recursed into
// (protobuf's own default recursion limit is 100).
inline constexpr int kMaxGroupDepth = 100;

class Cursor {
 public:
  explicit Cursor(std::span<const std::byte> bytes)
      : begin_(bytes.data()), at_(bytes.data()), end_(bytes.data() + bytes.size()) {}

  std::size_t position() const { return static_cast<std::size_t>(at_ - begin_); }
  std::size_t left() const { return static_cast<std::size_t>(end_ - at_); }
  bool at_end() const { return at_ == end_; }

  // A base-128 varint of up to ten bytes; bits past 64 are dropped, as protobuf drops them.
  // False when the bytes end inside it or it runs past ten bytes.
  bool read_varint(std::uint64_t& value) {
    if (at_ != end_ && static_cast<std::uint8_t>(*at_) < 0x80) {  // most varints are one byte
      value = static_cast<std::uint8_t>(*at_++);
      return true;
    }
    std::uint64_t result = 0;
    for (int shift = 0; shift <= 63; shift += 7) {  // ten bytes: shifts 0, 7, ..., 63
      if (at_ == end_) return false;
      const auto byte = static_cast<std::uint8_t>(*at_++);
      result |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if (byte < 0x80) {
        value = result;
        return true;
      }
    }
    return false;
  }

  // A field tag: protobuf reads it as a 32-bit varint of at most five bytes. False (and nothing
  // consumed that matters: the caller fails) for a longer or unfinished one, or one past 2^32.
  bool read_tag(std::uint32_t& tag) {
    std::uint64_t value = 0;
    const std::byte* start = at_;
    if (!read_varint(value) || at_ - start > 5 || value > 0xffffffffu) return false;
    tag = static_cast<std::uint32_t>(value);
    return true;
  }

  template <typename T>
  bool read_fixed(T& value) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8);
    static_assert(std::endian::native == std::endian::little);
    if (left() < sizeof(T)) return false;
    std::memcpy(&value, at_, sizeof(T));
    at_ += sizeof(T);
    return true;
  }

  // A length-delimited field's bytes (its length already read by this call).
  enum class BytesStatus { Ok, TruncatedLength, PastEnd };
  BytesStatus read_length_delimited(std::span<const std::byte>& bytes, std::uint64_t& length) {
    if (!read_varint(length)) return BytesStatus::TruncatedLength;
    if (length > left()) return BytesStatus::PastEnd;
    bytes = std::span<const std::byte>(at_, static_cast<std::size_t>(length));
    at_ += length;
    return BytesStatus::Ok;
  }

  // Skips the value of a field whose tag was just read (a group up to its end tag). False when
  // the field is malformed or cut short.
  bool skip(std::uint32_t tag, int depth = 0) {
    switch (static_cast<WireType>(tag & 7)) {
      case WireType::Varint: {
        std::uint64_t ignored = 0;
        return read_varint(ignored);
      }
      case WireType::Fixed64:
        return advance(8);
      case WireType::Fixed32:
        return advance(4);
      case WireType::LengthDelimited: {
        std::uint64_t length = 0;
        return read_varint(length) && advance(length);
      }
      case WireType::StartGroup: {
        if (depth >= kMaxGroupDepth) return false;
        const std::uint32_t end_tag = (tag & ~7u) | static_cast<std::uint32_t>(WireType::EndGroup);
        for (;;) {
          std::uint32_t inner = 0;
          if (!read_tag(inner) || inner == 0) return false;
          if (inner == end_tag) return true;
          if (!skip(inner, depth + 1)) return false;
        }
      }
      case WireType::EndGroup:
        return false;  // an end without its start
    }
    return false;  // wire types 6 and 7 do not exist
  }

 private:
  bool advance(std::uint64_t bytes) {
    if (bytes > left()) return false;
    at_ += bytes;
    return true;
  }

  const std::byte* begin_;
  const std::byte* at_;
  const std::byte* end_;
};

}  // namespace rulestream::wire
