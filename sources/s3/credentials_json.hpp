#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sources/s3/s3_credentials.hpp"

namespace rulestream {

// Credentials in the JSON that container agents, the instance metadata service and a
// credential_process print: {"AccessKeyId", "SecretAccessKey", `token_field` ("Token" from an
// agent, "SessionToken" from a process), "Expiration": "2030-01-02T03:04:05Z"}. The token and
// the expiration may be missing (long-term keys). `source` becomes the credentials' source.
// With `version`, the object must also say "Version": that number (a credential_process's 1).
// Throws StorageError naming `source` when the text is not such an object; the message never
// quotes the text, which holds the secret.
S3Credentials parse_credentials_json(std::string_view text, std::string_view token_field,
                                     const std::string& source,
                                     std::optional<std::int64_t> version = std::nullopt);

// An ISO 8601 UTC time ("2030-01-02T03:04:05Z", fractions allowed), as STS and the agents write
// expirations. Throws StorageError naming `source` when it is not one.
std::chrono::system_clock::time_point parse_expiration(std::string_view text,
                                                       const std::string& source);

}  // namespace rulestream
