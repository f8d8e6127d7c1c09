#pragma once

// A small JSON scanner for text metrics: reads one value at a time from a window of a file that
// may end anywhere, so a 100 MB trainer_state.json or an endless JSON-lines log is read in
// bounded memory, and a value the window ends inside is reported as incomplete (read again with
// the next window) rather than as an error. Takes Python's NaN, Infinity and -Infinity tokens,
// which json.dumps writes for non-finite floats and strict JSON parsers refuse.
//
// Only what metrics need is kept: numbers, and the keys of flat objects; strings are decoded
// (escapes, \u surrogate pairs) only where they are keys; nested arrays and objects are skipped.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rulestream {

enum class ScanStatus : unsigned char {
  Complete,    // the value was read; the position is past it
  Incomplete,  // the text ends inside the value: more of the file is needed
  Invalid,     // not JSON (the message says why)
};

struct JsonScalar {
  enum class Kind : unsigned char { Number, String, Bool, Null, Composite };
  Kind kind = Kind::Null;
  double number = 0.0;  // Kind::Number
};

struct JsonMember {
  std::string key;
  JsonScalar value;
};

class JsonScanner {
 public:
  explicit JsonScanner(std::string_view text, std::size_t position = 0)
      : text_(text), position_(position) {}

  std::size_t position() const { return position_; }
  // Why the last scan was Invalid, and where in the text it failed.
  const std::string& error() const { return error_; }
  std::size_t error_position() const { return error_position_; }

  // Past spaces; then the next character, or nullopt at the end of the text.
  std::optional<char> peek();
  // Consumes one character (after peek returned it).
  void advance() { ++position_; }

  // A string, decoded (the scanner stands on its opening quote).
  ScanStatus string(std::string& out);
  // Any value: numbers (NaN, Infinity and -Infinity included) and literals are read; strings,
  // arrays and objects are passed over (Kind::String, Kind::Composite).
  ScanStatus value(JsonScalar& out);
  // An object whose members are scalars or skipped values, each member's key and scalar in
  // `members` (cleared first). On Incomplete or Invalid the position is left where it was.
  ScanStatus flat_object(std::vector<JsonMember>& members);

 private:
  ScanStatus number(JsonScalar& out);
  ScanStatus literal(std::string_view word, JsonScalar::Kind kind, double number, JsonScalar& out);
  ScanStatus skip_composite();
  ScanStatus skip_string();
  ScanStatus invalid(std::string message);

  std::string_view text_;
  std::size_t position_ = 0;
  std::string error_;
  std::size_t error_position_ = 0;
};

}  // namespace rulestream
