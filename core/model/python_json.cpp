#include "core/model/python_json.hpp"

#include <array>
#include <boost/json.hpp>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <system_error>

namespace rulestream {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

void append_unicode_escape(std::string& out, std::uint32_t unit) {
  out += "\\u";
  out += kHexDigits[(unit >> 12) & 0xF];
  out += kHexDigits[(unit >> 8) & 0xF];
  out += kHexDigits[(unit >> 4) & 0xF];
  out += kHexDigits[unit & 0xF];
}

[[noreturn]] void throw_invalid_utf8(std::string_view utf8, std::size_t offset) {
  throw std::invalid_argument("string is not valid UTF-8 (byte " + std::to_string(offset) +
                              " of \"" + std::string(utf8.substr(0, 64)) + "\")");
}

// Decodes the code point starting at utf8[i] and advances i, or throws (InvalidUtf8::Refuse) or
// takes the one byte as Python's surrogateescape does, U+DC80-U+DCFF (SurrogateEscape). Strict:
// no overlong forms, no surrogates, nothing above U+10FFFF (the same rules Boost.JSON's parser
// applies).
std::uint32_t decode_utf8(std::string_view utf8, std::size_t& i, InvalidUtf8 invalid) {
  const std::size_t start = i;
  const auto invalid_at = [&](std::string_view text, std::size_t offset) -> std::uint32_t {
    if (invalid == InvalidUtf8::Refuse) throw_invalid_utf8(text, offset);
    i = offset + 1;
    return 0xDC00u + static_cast<unsigned char>(text[offset]);
  };
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(utf8[k]); };
  const unsigned char lead = byte(i);
  int continuation = 0;
  std::uint32_t code_point = 0;
  std::uint32_t minimum = 0;
  if (lead < 0x80) {
    ++i;
    return lead;
  } else if ((lead & 0xE0) == 0xC0) {
    continuation = 1;
    code_point = lead & 0x1F;
    minimum = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    continuation = 2;
    code_point = lead & 0x0F;
    minimum = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    continuation = 3;
    code_point = lead & 0x07;
    minimum = 0x10000;
  } else {
    return invalid_at(utf8, start);
  }
  if (utf8.size() - i <= static_cast<std::size_t>(continuation)) {
    return invalid_at(utf8, start);
  }
  for (int k = 1; k <= continuation; ++k) {
    const unsigned char next = byte(i + k);
    if ((next & 0xC0) != 0x80) return invalid_at(utf8, start);
    code_point = (code_point << 6) | (next & 0x3F);
  }
  if (code_point < minimum || code_point > 0x10FFFF ||
      (code_point >= 0xD800 && code_point <= 0xDFFF)) {
    return invalid_at(utf8, start);
  }
  i += continuation + 1;
  return code_point;
}

void append_array(std::string& out, const boost::json::array& array, InvalidUtf8 invalid) {
  out += '[';
  bool first = true;
  for (const auto& element : array) {
    if (!first) out += ", ";
    first = false;
    append_python_json(out, element, invalid);
  }
  out += ']';
}

void append_object(std::string& out, const boost::json::object& object, InvalidUtf8 invalid) {
  out += '{';
  bool first = true;
  for (const auto& member : object) {
    if (!first) out += ", ";
    first = false;
    append_python_json_string(out, member.key(), invalid);
    out += ": ";
    append_python_json(out, member.value(), invalid);
  }
  out += '}';
}

template <typename Integer>
void append_integer(std::string& out, Integer value) {
  std::array<char, 24> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  out.append(buffer.data(), result.ptr);
}

}  // namespace

void append_python_json_string(std::string& out, std::string_view utf8, InvalidUtf8 invalid) {
  out += '"';
  std::size_t i = 0;
  while (i < utf8.size()) {
    const std::uint32_t code_point = decode_utf8(utf8, i, invalid);
    switch (code_point) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      default:
        break;
    }
    if (code_point >= 0x20 && code_point <= 0x7E) {
      out += static_cast<char>(code_point);
    } else if (code_point < 0x10000) {
      append_unicode_escape(out, code_point);
    } else {
      const std::uint32_t offset = code_point - 0x10000;
      append_unicode_escape(out, 0xD800 + (offset >> 10));
      append_unicode_escape(out, 0xDC00 + (offset & 0x3FF));
    }
  }
  out += '"';
}

void append_python_float(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "NaN";
    return;
  }
  if (std::isinf(value)) {
    out += value < 0 ? "-Infinity" : "Infinity";
    return;
  }
  // The shortest digits that round-trip (what repr() picks too), laid out by repr()'s rule:
  // positional notation when the decimal point falls within [-4, 16), exponent otherwise.
  std::array<char, 32> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value,
                                    std::chars_format::scientific);
  std::string_view text(buffer.data(), static_cast<std::size_t>(result.ptr - buffer.data()));
  if (text.front() == '-') {
    out += '-';
    text.remove_prefix(1);
  }
  const std::size_t e = text.find('e');
  std::string digits;
  for (const char c : text.substr(0, e)) {
    if (c != '.') digits += c;
  }
  int exponent = 0;
  const std::string_view exponent_text = text.substr(e + 1);
  std::from_chars(exponent_text.data() + (exponent_text.front() == '+' ? 1 : 0),
                  exponent_text.data() + exponent_text.size(), exponent);
  const int point = exponent + 1;  // digits d1d2... mean 0.d1d2... x 10^point
  const int count = static_cast<int>(digits.size());
  if (point > -4 && point <= 16) {
    if (point <= 0) {
      out += "0.";
      out.append(static_cast<std::size_t>(-point), '0');
      out += digits;
    } else if (point < count) {
      out.append(digits, 0, static_cast<std::size_t>(point));
      out += '.';
      out.append(digits, static_cast<std::size_t>(point));
    } else {
      out += digits;
      out.append(static_cast<std::size_t>(point - count), '0');
      out += ".0";
    }
    return;
  }
  out += digits.front();
  if (count > 1) {
    out += '.';
    out.append(digits, 1);
  }
  out += exponent < 0 ? "e-" : "e+";
  const int magnitude = exponent < 0 ? -exponent : exponent;
  if (magnitude < 10) out += '0';
  append_integer(out, magnitude);
}

void append_python_json(std::string& out, const boost::json::value& value, InvalidUtf8 invalid) {
  switch (value.kind()) {
    case boost::json::kind::null:
      out += "null";
      return;
    case boost::json::kind::bool_:
      out += value.get_bool() ? "true" : "false";
      return;
    case boost::json::kind::int64:
      append_integer(out, value.get_int64());
      return;
    case boost::json::kind::uint64:
      append_integer(out, value.get_uint64());
      return;
    case boost::json::kind::double_:
      append_python_float(out, value.get_double());
      return;
    case boost::json::kind::string:
      append_python_json_string(out, value.get_string(), invalid);
      return;
    case boost::json::kind::array:
      append_array(out, value.get_array(), invalid);
      return;
    case boost::json::kind::object:
      append_object(out, value.get_object(), invalid);
      return;
  }
}

std::string dump_python_json(const boost::json::value& value, InvalidUtf8 invalid) {
  std::string out;
  append_python_json(out, value, invalid);
  return out;
}

}  // namespace rulestream
