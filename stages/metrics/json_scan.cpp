#include "stages/metrics/json_scan.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>

#include "stages/metrics/text_numbers.hpp"

namespace rulestream {
namespace {

bool is_json_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

void append_utf8(std::string& out, std::uint32_t code) {
  if (code < 0x80) {
    out.push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (code >> 6)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else if (code < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (code >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (code >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  }
}

std::optional<std::uint32_t> hex4(std::string_view text) {
  std::uint32_t code = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + 4, code, 16);
  if (error != std::errc() || end != text.data() + 4) return std::nullopt;
  return code;
}

}  // namespace

std::optional<char> JsonScanner::peek() {
  while (position_ < text_.size() && is_json_space(text_[position_])) ++position_;
  if (position_ >= text_.size()) return std::nullopt;
  return text_[position_];
}

ScanStatus JsonScanner::invalid(std::string message) {
  error_ = std::move(message);
  error_position_ = position_;
  return ScanStatus::Invalid;
}

ScanStatus JsonScanner::string(std::string& out) {
  // Most keys hold no escape: taken whole up to their closing quote.
  const std::size_t close = text_.find('"', position_ + 1);
  if (close == std::string_view::npos) return ScanStatus::Incomplete;
  const std::string_view plain = text_.substr(position_ + 1, close - position_ - 1);
  if (plain.find('\\') == std::string_view::npos &&
      std::none_of(plain.begin(), plain.end(),
                   [](char c) { return static_cast<unsigned char>(c) < 0x20; })) {
    out.assign(plain);
    position_ = close + 1;
    return ScanStatus::Complete;
  }
  out.clear();
  std::size_t at = position_ + 1;  // past the opening quote
  while (at < text_.size()) {
    const char c = text_[at];
    if (c == '"') {
      position_ = at + 1;
      return ScanStatus::Complete;
    }
    if (static_cast<unsigned char>(c) < 0x20) return invalid("a control character in a string");
    if (c != '\\') {
      out.push_back(c);
      ++at;
      continue;
    }
    if (at + 1 >= text_.size()) return ScanStatus::Incomplete;
    const char escape = text_[at + 1];
    at += 2;
    switch (escape) {
      case '"':
      case '\\':
      case '/':
        out.push_back(escape);
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u': {
        if (at + 4 > text_.size()) return ScanStatus::Incomplete;
        const auto code = hex4(text_.substr(at, 4));
        if (!code) return invalid("a bad \\u escape");
        at += 4;
        std::uint32_t point = *code;
        if (point >= 0xD800 && point < 0xDC00) {  // a high surrogate: its pair follows, or not
          if (at + 6 > text_.size()) return ScanStatus::Incomplete;
          const auto low = text_.substr(at, 2) == "\\u" ? hex4(text_.substr(at + 2, 4))
                                                        : std::optional<std::uint32_t>();
          if (low && *low >= 0xDC00 && *low < 0xE000) {
            point = 0x10000 + ((point - 0xD800) << 10) + (*low - 0xDC00);
            at += 6;
          } else {
            point = 0xFFFD;  // a lone surrogate (Python writes them): replaced
          }
        } else if (point >= 0xDC00 && point < 0xE000) {
          point = 0xFFFD;
        }
        append_utf8(out, point);
        break;
      }
      default:
        return invalid("a bad escape in a string");
    }
  }
  return ScanStatus::Incomplete;
}

ScanStatus JsonScanner::skip_string() {
  std::size_t at = position_ + 1;
  while (at < text_.size()) {
    const char c = text_[at];
    if (c == '"') {
      position_ = at + 1;
      return ScanStatus::Complete;
    }
    at += c == '\\' ? 2 : 1;
  }
  return ScanStatus::Incomplete;
}

ScanStatus JsonScanner::number(JsonScalar& out) {
  std::size_t end = position_;
  while (end < text_.size()) {
    const char c = text_[end];
    if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
      ++end;
    } else {
      break;
    }
  }
  // A number that reaches the end of the text may go on in the file.
  if (end == text_.size()) return ScanStatus::Incomplete;
  // from_chars takes what JSON writes, and a little more (a leading zero, "1."), as Python's
  // json takes what it wrote; what JSON refuses that from_chars would read ("+1", ".5") never
  // gets here (value() sends only '-' and digits), and "-" must be followed by a digit.
  const char* const begin = text_.data() + position_;
  const char* const stop = text_.data() + end;
  double value = 0.0;
  const auto [parsed_to, error] = std::from_chars(begin, stop, value);
  if (error == std::errc::result_out_of_range && parsed_to == stop) {
    value = parse_python_float(std::string_view(begin, static_cast<std::size_t>(stop - begin)))
                .value_or(value);  // past double's range: +-inf or 0, as Python gives
  } else if (error != std::errc() || parsed_to != stop ||
             (*begin == '-' && (stop - begin < 2 || begin[1] < '0' || begin[1] > '9'))) {
    return invalid("not a number: '" + std::string(begin, stop) + "'");
  }
  out.kind = JsonScalar::Kind::Number;
  out.number = value;
  position_ = end;
  return ScanStatus::Complete;
}

ScanStatus JsonScanner::literal(std::string_view word, JsonScalar::Kind kind, double number,
                                JsonScalar& out) {
  const std::string_view rest = text_.substr(position_);
  if (rest.size() < word.size()) {
    return word.starts_with(rest) ? ScanStatus::Incomplete : invalid("an unknown word");
  }
  if (!rest.starts_with(word)) return invalid("an unknown word");
  out.kind = kind;
  out.number = number;
  position_ += word.size();
  return ScanStatus::Complete;
}

ScanStatus JsonScanner::skip_composite() {
  // Brackets are counted, strings passed over; what is inside is not checked further.
  std::size_t depth = 0;
  std::size_t at = position_;
  while (at < text_.size()) {
    const char c = text_[at];
    if (c == '"') {
      JsonScanner inner(text_, at);
      const ScanStatus status = inner.skip_string();
      if (status != ScanStatus::Complete) return status;
      at = inner.position_;
      continue;
    }
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') {
      if (--depth == 0) {
        position_ = at + 1;
        return ScanStatus::Complete;
      }
    }
    ++at;
  }
  return ScanStatus::Incomplete;
}

ScanStatus JsonScanner::value(JsonScalar& out) {
  const auto next = peek();
  if (!next) return ScanStatus::Incomplete;
  switch (*next) {
    case '"':
      out.kind = JsonScalar::Kind::String;
      return skip_string();
    case '[':
    case '{':
      out.kind = JsonScalar::Kind::Composite;
      return skip_composite();
    case 't':
      return literal("true", JsonScalar::Kind::Bool, 1.0, out);
    case 'f':
      return literal("false", JsonScalar::Kind::Bool, 0.0, out);
    case 'n':
      return literal("null", JsonScalar::Kind::Null, 0.0, out);
    case 'N':
      return literal("NaN", JsonScalar::Kind::Number, std::numeric_limits<double>::quiet_NaN(),
                     out);
    case 'I':
      return literal("Infinity", JsonScalar::Kind::Number, std::numeric_limits<double>::infinity(),
                     out);
    default:
      if (*next == '-' && position_ + 1 < text_.size() && text_[position_ + 1] == 'I') {
        return literal("-Infinity", JsonScalar::Kind::Number,
                       -std::numeric_limits<double>::infinity(), out);
      }
      if (*next == '-' || (*next >= '0' && *next <= '9')) return number(out);
      return invalid(std::string("an unexpected '") + *next + "'");
  }
}

ScanStatus JsonScanner::flat_object(std::vector<JsonMember>& members) {
  // Members are written over the vector's old ones, so their keys' buffers are reused from
  // object to object; the vector is cut to size at the end.
  std::size_t used = 0;
  const std::size_t start = position_;
  const auto fail = [&](ScanStatus status) {
    position_ = start;
    members.clear();
    return status;
  };
  auto next = peek();
  if (!next) return fail(ScanStatus::Incomplete);
  if (*next != '{') return fail(invalid("not an object"));
  advance();
  next = peek();
  if (!next) return fail(ScanStatus::Incomplete);
  if (*next == '}') {
    advance();
    members.clear();
    return ScanStatus::Complete;
  }
  for (;;) {
    next = peek();
    if (!next) return fail(ScanStatus::Incomplete);
    if (*next != '"') return fail(invalid("a key that is not a string"));
    if (used == members.size()) members.emplace_back();
    JsonMember& member = members[used++];
    ScanStatus status = string(member.key);
    if (status != ScanStatus::Complete) return fail(status);
    next = peek();
    if (!next) return fail(ScanStatus::Incomplete);
    if (*next != ':') return fail(invalid("no ':' after a key"));
    advance();
    status = value(member.value);
    if (status != ScanStatus::Complete) return fail(status);
    next = peek();
    if (!next) return fail(ScanStatus::Incomplete);
    if (*next != '}' && *next != ',') return fail(invalid("no ',' between members"));
    advance();
    if (*next == '}') {
      members.resize(used);
      return ScanStatus::Complete;
    }
  }
}

}  // namespace rulestream
