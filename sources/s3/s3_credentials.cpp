#include "sources/s3/s3_credentials.hpp"

#include <cstdlib>
#include <ctime>

#include "core/model/utc_time.hpp"

namespace rulestream {

EnvironmentLookup process_environment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

std::optional<std::string> non_empty_variable(const EnvironmentLookup& environment,
                                              std::string_view name) {
  auto value = environment(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

std::string S3Credentials::describe() const {
  const std::string tail = access_key_id.size() > 4 ? access_key_id.substr(access_key_id.size() - 4)
                                                    : std::string(access_key_id.size(), '*');
  return "access key ..." + tail + (session_token.empty() ? "" : " with a session token") +
         " from " + source + ", region " + region +
         (expiration ? ", expiring " + iso8601_utc_seconds(*expiration) : "");
}

}  // namespace rulestream
