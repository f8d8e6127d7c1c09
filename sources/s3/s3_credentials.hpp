#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace rulestream {

// Looks up an environment variable; tests pass their own so that they never depend on (or
// change) the process's environment.
using EnvironmentLookup = std::function<std::optional<std::string>(std::string_view name)>;
EnvironmentLookup process_environment();

// What a request to S3 is signed with, and the region it is signed for.
//
// describe() is the only way to show it: the key id's last four characters, where it came from,
// and the region. The secret and the session token are never printed, so there is deliberately
// no operator<<.
struct S3Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // empty: long-term keys
  std::string region;
  std::string source;  // "environment", "shared credentials file /root/.aws/credentials [dev]"

  std::string describe() const;
};

// Finds credentials in the order the AWS CLI and SDKs use:
//  1. AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN);
//  2. the shared credentials file (AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials),
//     section [AWS_PROFILE or "default"];
//  3. the config file (AWS_CONFIG_FILE, else ~/.aws/config), section [profile NAME] (or
//     [default]), which the CLI also reads keys from.
// The region: AWS_REGION, AWS_DEFAULT_REGION, the config file's profile, else us-east-1.
// Throws StorageError saying what was looked at when no keys are found, or when only one of the
// two variables of a pair is set (a half-configured shell is a mistake worth naming).
S3Credentials load_s3_credentials(const EnvironmentLookup& environment = process_environment());

}  // namespace rulestream
