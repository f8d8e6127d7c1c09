#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace rulestream {

// Looks up an environment variable; tests pass their own so that they never depend on (or
// change) the process's environment.
using EnvironmentLookup = std::function<std::optional<std::string>(std::string_view name)>;
EnvironmentLookup process_environment();
// The variable's value, or nullopt when it is unset or empty (an empty variable is no setting).
std::optional<std::string> non_empty_variable(const EnvironmentLookup& environment,
                                              std::string_view name);

// What a request to S3 is signed with, and the region it is signed for.
//
// describe() is the only way to show it: the key id's last four characters, where it came from,
// the region and when they expire. The secret and the session token are never printed, so there
// is deliberately no operator<<.
struct S3Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // empty: long-term keys
  std::string region;
  std::string source;  // "environment", "shared credentials file /root/.aws/credentials [dev]"
  // Set for temporary credentials that say when they stop working (STS, container, instance
  // metadata, credential_process); RefreshingCredentials fetches new ones before then.
  std::optional<std::chrono::system_clock::time_point> expiration;

  std::string describe() const;
};

}  // namespace rulestream
