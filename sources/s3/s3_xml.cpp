#include "sources/s3/s3_xml.hpp"

#include <charconv>
#include <ctime>
#include <limits>
#include <pugixml.hpp>

#include "core/model/exceptions.hpp"

namespace rulestream {
namespace {

bool parse_document(pugi::xml_document& document, std::string_view xml) {
  return static_cast<bool>(
      document.load_buffer(xml.data(), xml.size(), pugi::parse_default, pugi::encoding_utf8));
}

template <typename Integer>
bool parse_integer(std::string_view text, Integer& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

S3ListPage parse_list_objects_v2(std::string_view xml, const std::string& where) {
  pugi::xml_document document;
  const pugi::xml_node result =
      parse_document(document, xml) ? document.child("ListBucketResult") : pugi::xml_node();
  if (!result) throw FormatError(where, "S3 answered with something that is not a listing");
  S3ListPage page;
  page.truncated = std::string_view(result.child_value("IsTruncated")) == "true";
  page.next_continuation_token = result.child_value("NextContinuationToken");
  if (page.truncated && page.next_continuation_token.empty()) {
    throw FormatError(where, "S3 listing is truncated but has no NextContinuationToken");
  }
  for (const pugi::xml_node entry : result.children("Contents")) {
    S3ObjectInfo object;
    object.key = entry.child_value("Key");
    const std::string_view size = entry.child_value("Size");
    if (object.key.empty() || !parse_integer(size, object.size)) {
      throw FormatError(where, "S3 listing entry without a key or a size (key \"" + object.key +
                                   "\", size \"" + std::string(size) + "\")");
    }
    object.modified_ns = parse_s3_timestamp(entry.child_value("LastModified"));
    page.objects.push_back(std::move(object));
  }
  for (const pugi::xml_node common : result.children("CommonPrefixes")) {
    std::string prefix = common.child_value("Prefix");
    if (prefix.empty())
      throw FormatError(where, "S3 listing has a CommonPrefixes without a Prefix");
    page.common_prefixes.push_back(std::move(prefix));
  }
  return page;
}

S3ErrorDocument parse_s3_error(std::string_view xml) {
  pugi::xml_document document;
  if (!parse_document(document, xml)) return {};
  const pugi::xml_node error = document.child("Error");
  return {error.child_value("Code"), error.child_value("Message")};
}

std::int64_t parse_s3_timestamp(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.fff]Z
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' ||
      text[16] != ':') {
    return 0;
  }
  std::tm time{};
  int year = 0;
  int month = 0;
  if (!parse_integer(text.substr(0, 4), year) || !parse_integer(text.substr(5, 2), month) ||
      !parse_integer(text.substr(8, 2), time.tm_mday) ||
      !parse_integer(text.substr(11, 2), time.tm_hour) ||
      !parse_integer(text.substr(14, 2), time.tm_min) ||
      !parse_integer(text.substr(17, 2), time.tm_sec)) {
    return 0;
  }
  time.tm_year = year - 1900;
  time.tm_mon = month - 1;
  std::int64_t nanoseconds = 0;
  if (text[19] == '.') {
    const std::string_view fraction = text.substr(20, text.find('Z', 20) - 20);
    std::int64_t scale = 100'000'000;
    for (const char digit : fraction.substr(0, 9)) {
      if (digit < '0' || digit > '9') return 0;
      nanoseconds += (digit - '0') * scale;
      scale /= 10;
    }
  }
  return epoch_seconds_to_ns(static_cast<std::int64_t>(::timegm(&time)), nanoseconds);
}

std::int64_t epoch_seconds_to_ns(std::int64_t seconds, std::int64_t nanoseconds) {
  constexpr std::int64_t kMaxSeconds = std::numeric_limits<std::int64_t>::max() / 1'000'000'000 - 1;
  if (seconds < 0 || seconds > kMaxSeconds) return 0;
  return seconds * 1'000'000'000 + nanoseconds;
}

}  // namespace rulestream
