#include "apps/report/script_text.hpp"

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <cctype>
#include <stdexcept>

namespace rulestream {
namespace {

bool contains_ignoring_case(std::string_view text, std::string_view needle) {
  const auto found =
      std::search(text.begin(), text.end(), needle.begin(), needle.end(), [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) ==
               std::tolower(static_cast<unsigned char>(b));
      });
  return found != text.end();
}

}  // namespace

std::string script_safe_json(const boost::json::value& value) {
  const std::string json = boost::json::serialize(value);
  std::string safe;
  safe.reserve(json.size());
  for (std::size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '<') {
      safe += "\\u003c";
    } else if (c == '>') {
      safe += "\\u003e";
    } else if (c == '&') {
      safe += "\\u0026";
    } else if (c == '\xE2' && i + 2 < json.size() && json[i + 1] == '\x80' &&
               (json[i + 2] == '\xA8' || json[i + 2] == '\xA9')) {
      safe += json[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      safe += c;
    }
  }
  return safe;
}

std::string_view checked_script_source(std::string_view source, const std::string& what) {
  for (const std::string_view bad : {"</script", "<!--"}) {
    if (contains_ignoring_case(source, bad)) {
      throw std::invalid_argument(what + " holds \"" + std::string(bad) +
                                  "\", which would end or break the page's <script> element");
    }
  }
  return source;
}

std::string html_escape(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        escaped += "&amp;";
        break;
      case '<':
        escaped += "&lt;";
        break;
      case '>':
        escaped += "&gt;";
        break;
      case '"':
        escaped += "&quot;";
        break;
      case '\'':
        escaped += "&#39;";
        break;
      default:
        escaped += c;
    }
  }
  return escaped;
}

}  // namespace rulestream
