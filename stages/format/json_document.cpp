#include "stages/format/json_document.hpp"

#include <boost/json.hpp>
#include <string>

#include "core/model/exceptions.hpp"

namespace rulestream {
namespace {

// A short rendering of an offending value for messages: enough to recognise it, never a whole
// array of thousands of entries.
std::string describe_value(const boost::json::value& value) {
  constexpr std::size_t kLimit = 60;
  switch (value.kind()) {
    case boost::json::kind::array:
      return "an array";
    case boost::json::kind::object:
      return "an object";
    default:
      break;
  }
  std::string text = boost::json::serialize(value);
  if (text.size() > kLimit) text = text.substr(0, kLimit) + "...";
  return text;
}

}  // namespace

boost::json::value parse_json_document(std::string_view json, const std::string& path,
                                       boost::json::storage_ptr storage) {
  boost::json::parser parser;
  // The constructor's resource is only scratch space; reset() picks where the value lives.
  parser.reset(std::move(storage));
  boost::system::error_code error;
  const std::size_t consumed = parser.write(json.data(), json.size(), error);
  if (!error) return parser.release();

  // Boost.JSON stops where the text went wrong; turn that into a line and column for people.
  std::size_t line = 1;
  std::size_t column = 1;
  for (std::size_t i = 0; i < consumed && i < json.size(); ++i) {
    if (json[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  throw FormatError(path, "malformed JSON at line " + std::to_string(line) + ", column " +
                              std::to_string(column) + " (byte " + std::to_string(consumed) +
                              "): " + error.message());
}

std::string_view strip_python_whitespace(std::string_view text) {
  constexpr std::string_view kWhitespace = " \t\n\r\f\v";
  const std::size_t first = text.find_first_not_of(kWhitespace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kWhitespace) - first + 1);
}

std::string JsonField::to_string() const {
  std::string out;
  append_to(out);
  return out.empty() ? "(document)" : out;
}

void JsonField::append_to(std::string& out) const {
  if (parent_ != nullptr) parent_->append_to(out);
  if (index_ != kNoIndex) {
    out += '[';
    out += std::to_string(index_);
    out += ']';
  } else if (parent_ != nullptr) {
    if (!out.empty()) out += '.';
    out += key_;
  }
}

void JsonFieldReader::fail(const JsonField& field, std::string_view problem) const {
  throw FormatError(path_, "field '" + field.to_string() + "' " + std::string(problem));
}

void JsonFieldReader::fail_kind(const boost::json::value& value, const JsonField& field,
                                std::string_view expected) const {
  fail(field, "must be " + std::string(expected) + ", got " + describe_value(value));
}

const boost::json::value* JsonFieldReader::find(const boost::json::object& object,
                                                std::string_view key) {
  return object.if_contains(key);
}

const boost::json::value& JsonFieldReader::require(const boost::json::object& object,
                                                   std::string_view key,
                                                   const JsonField& field) const {
  const boost::json::value* value = object.if_contains(key);
  if (value == nullptr) fail(field, "is missing");
  return *value;
}

const boost::json::object& JsonFieldReader::as_object(const boost::json::value& value,
                                                      const JsonField& field) const {
  if (!value.is_object()) fail_kind(value, field, "an object");
  return value.get_object();
}

const boost::json::array& JsonFieldReader::as_array(const boost::json::value& value,
                                                    const JsonField& field) const {
  if (!value.is_array()) fail_kind(value, field, "an array");
  return value.get_array();
}

std::string_view JsonFieldReader::as_string(const boost::json::value& value,
                                            const JsonField& field) const {
  if (!value.is_string()) fail_kind(value, field, "a string");
  return value.get_string();
}

bool JsonFieldReader::as_bool(const boost::json::value& value, const JsonField& field) const {
  if (!value.is_bool()) fail_kind(value, field, "true or false");
  return value.get_bool();
}

std::int64_t JsonFieldReader::as_non_negative_int64(const boost::json::value& value,
                                                    const JsonField& field) const {
  if (value.is_int64() && value.get_int64() >= 0) return value.get_int64();
  if (value.is_uint64() && value.get_uint64() <= static_cast<std::uint64_t>(INT64_MAX)) {
    return static_cast<std::int64_t>(value.get_uint64());
  }
  fail_kind(value, field, "a non-negative integer below 2^63");
}

std::uint64_t JsonFieldReader::as_uint64(const boost::json::value& value,
                                         const JsonField& field) const {
  if (value.is_uint64()) return value.get_uint64();
  if (value.is_int64() && value.get_int64() >= 0)
    return static_cast<std::uint64_t>(value.get_int64());
  fail_kind(value, field, "a non-negative integer below 2^64");
}

}  // namespace rulestream
