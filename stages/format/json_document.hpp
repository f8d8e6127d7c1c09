#pragma once

#include <boost/json/storage_ptr.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace rulestream {

// Parses a whole JSON document. Throws FormatError naming `path`, the line, column and byte
// offset and Boost.JSON's reason when the text is not one well-formed JSON value.
boost::json::value parse_json_document(std::string_view json, const std::string& path,
                                       boost::json::storage_ptr storage = {});

// Python's str.strip() (for the ASCII whitespace it strips): smdebug strips some names it
// reads, so "TRAIN " still means TRAIN.
std::string_view strip_python_whitespace(std::string_view text);

// Where a value sits in a document ("tensor_payload[3].start_idx"), built without allocating:
// each field points at its parent, and the text is only made for an error message. A field
// must not outlive the fields it was made from, so keep parents in named locals.
class JsonField {
 public:
  static JsonField root() { return JsonField(nullptr, {}, kNoIndex); }
  JsonField member(std::string_view key) const { return JsonField(this, key, kNoIndex); }
  JsonField element(std::size_t index) const { return JsonField(this, {}, index); }
  std::string to_string() const;

 private:
  static constexpr std::size_t kNoIndex = static_cast<std::size_t>(-1);
  JsonField(const JsonField* parent, std::string_view key, std::size_t index)
      : parent_(parent), key_(key), index_(index) {}
  void append_to(std::string& out) const;

  const JsonField* parent_;
  std::string_view key_;
  std::size_t index_;
};

// Typed access to the fields of one parsed file; every failure is a FormatError that names the
// file, the field and what was found instead.
class JsonFieldReader {
 public:
  explicit JsonFieldReader(const std::string& path) : path_(path) {}

  [[noreturn]] void fail(const JsonField& field, std::string_view problem) const;

  // The member, or nullptr when absent. A JSON null is returned as a value: callers decide.
  static const boost::json::value* find(const boost::json::object& object, std::string_view key);
  // The member; throws naming `field` (the member's own path) when absent.
  const boost::json::value& require(const boost::json::object& object, std::string_view key,
                                    const JsonField& field) const;

  const boost::json::object& as_object(const boost::json::value& value,
                                       const JsonField& field) const;
  const boost::json::array& as_array(const boost::json::value& value, const JsonField& field) const;
  std::string_view as_string(const boost::json::value& value, const JsonField& field) const;
  bool as_bool(const boost::json::value& value, const JsonField& field) const;
  // Integers written by Python: no fraction, no exponent, within range.
  std::int64_t as_non_negative_int64(const boost::json::value& value, const JsonField& field) const;
  std::uint64_t as_uint64(const boost::json::value& value, const JsonField& field) const;

  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail_kind(const boost::json::value& value, const JsonField& field,
                              std::string_view expected) const;

  const std::string& path_;
};

}  // namespace rulestream
