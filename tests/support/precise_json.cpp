#include "tests/support/precise_json.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/value_stack.hpp>
#include <charconv>
#include <cstdint>
#include <stdexcept>

namespace rulestream::testing {
namespace {

namespace json = boost::json;

// Boost.JSON's own value-building handler (boost/json/detail/handler.hpp), except that doubles
// are converted from their text.
struct PreciseHandler {
  static constexpr std::size_t max_object_size = json::object::max_size();
  static constexpr std::size_t max_array_size = json::array::max_size();
  static constexpr std::size_t max_key_size = json::string::max_size();
  static constexpr std::size_t max_string_size = json::string::max_size();

  json::value_stack stack;
  std::string number_text;  // the parts of a number split across buffers (not with one buffer)

  bool on_document_begin(json::error_code&) { return true; }
  bool on_document_end(json::error_code&) { return true; }
  bool on_object_begin(json::error_code&) { return true; }
  bool on_object_end(std::size_t n, json::error_code&) {
    stack.push_object(n);
    return true;
  }
  bool on_array_begin(json::error_code&) { return true; }
  bool on_array_end(std::size_t n, json::error_code&) {
    stack.push_array(n);
    return true;
  }
  bool on_key_part(json::string_view s, std::size_t, json::error_code&) {
    stack.push_chars(s);
    return true;
  }
  bool on_key(json::string_view s, std::size_t, json::error_code&) {
    stack.push_key(s);
    return true;
  }
  bool on_string_part(json::string_view s, std::size_t, json::error_code&) {
    stack.push_chars(s);
    return true;
  }
  bool on_string(json::string_view s, std::size_t, json::error_code&) {
    stack.push_string(s);
    return true;
  }
  bool on_number_part(json::string_view s, json::error_code&) {
    number_text.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t i, json::string_view, json::error_code&) {
    number_text.clear();
    stack.push_int64(i);
    return true;
  }
  bool on_uint64(std::uint64_t u, json::string_view, json::error_code&) {
    number_text.clear();
    stack.push_uint64(u);
    return true;
  }
  bool on_double(double, json::string_view s, json::error_code& ec) {
    number_text.append(s.data(), s.size());
    double exact = 0.0;
    const char* begin = number_text.data();
    const char* end = begin + number_text.size();
    const auto [ptr, error] = std::from_chars(begin, end, exact);
    number_text.clear();
    if (error != std::errc() || ptr != end) {
      ec = json::error::syntax;
      return false;
    }
    stack.push_double(exact);
    return true;
  }
  bool on_bool(bool b, json::error_code&) {
    stack.push_bool(b);
    return true;
  }
  bool on_null(json::error_code&) {
    stack.push_null();
    return true;
  }
  bool on_comment_part(json::string_view, json::error_code&) { return true; }
  bool on_comment(json::string_view, json::error_code&) { return true; }
};

}  // namespace

json::value parse_json_precisely(std::string_view text, const std::string& where) {
  json::parse_options options;
  options.max_depth = 64;
  json::basic_parser<PreciseHandler> parser(options);
  parser.handler().stack.reset();
  json::error_code ec;
  const std::size_t used = parser.write_some(false, text.data(), text.size(), ec);
  if (!ec && used < text.size()) ec = json::error::extra_data;
  if (ec) {
    throw std::runtime_error(where + ": invalid JSON at byte " + std::to_string(used) + ": " +
                             ec.message());
  }
  return parser.handler().stack.release();
}

}  // namespace rulestream::testing
