#include "sources/s3/credentials_json.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include "core/model/exceptions.hpp"
#include "sources/s3/s3_xml.hpp"

namespace rulestream {
namespace {

std::string string_field(const boost::json::object& object, std::string_view name,
                         const std::string& source, bool required) {
  const auto* value = object.if_contains(name);
  if (value == nullptr || value->is_null()) {
    if (required) throw StorageError(source + ": the answer has no " + std::string(name));
    return {};
  }
  if (!value->is_string()) {
    throw StorageError(source + ": " + std::string(name) + " in the answer is not a string");
  }
  return std::string(value->as_string());
}

}  // namespace

S3Credentials parse_credentials_json(std::string_view text, std::string_view token_field,
                                     const std::string& source,
                                     std::optional<std::int64_t> version) {
  boost::system::error_code error;
  const boost::json::value document = boost::json::parse(text, error);
  if (error || !document.is_object()) {
    throw StorageError(source + ": the answer is not a JSON object of credentials");
  }
  const boost::json::object& object = document.as_object();
  if (version) {
    const auto* given = object.if_contains("Version");
    if (given == nullptr || !given->is_int64() || given->as_int64() != *version) {
      throw StorageError(source + ": the answer must say \"Version\": " + std::to_string(*version));
    }
  }
  S3Credentials credentials;
  credentials.access_key_id = string_field(object, "AccessKeyId", source, true);
  credentials.secret_access_key = string_field(object, "SecretAccessKey", source, true);
  credentials.session_token = string_field(object, token_field, source, false);
  const std::string expiration = string_field(object, "Expiration", source, false);
  if (!expiration.empty()) credentials.expiration = parse_expiration(expiration, source);
  credentials.source = source;
  return credentials;
}

std::chrono::system_clock::time_point parse_expiration(std::string_view text,
                                                       const std::string& source) {
  const std::int64_t nanoseconds = parse_s3_timestamp(text);
  if (nanoseconds == 0) {
    throw StorageError(source + ": the expiration '" + std::string(text) +
                       "' is not an ISO 8601 UTC time");
  }
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::nanoseconds(nanoseconds)));
}

}  // namespace rulestream
