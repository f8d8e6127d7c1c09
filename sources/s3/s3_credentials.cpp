#include "sources/s3/s3_credentials.hpp"

#include <cstdlib>
#include <ctime>

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
         (expiration ? ", expiring " + utc_timestamp(*expiration) : "");
}

std::string utc_timestamp(std::chrono::system_clock::time_point time) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(time);
  std::tm parts{};
  ::gmtime_r(&seconds, &parts);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

}  // namespace rulestream
