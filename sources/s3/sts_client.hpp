#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "sources/s3/s3_credentials.hpp"

namespace rulestream {

// Where STS requests go: AWS_ENDPOINT_URL_STS, else AWS_ENDPOINT_URL, else the regional
// https://sts.REGION.amazonaws.com.
struct StsEndpoint {
  std::string url;
  std::string region;

  static StsEndpoint resolve(const EnvironmentLookup& environment, const std::string& region);
};

// What role to take on, and as whom.
struct AssumeRoleRequest {
  std::string role_arn;
  std::string session_name;  // empty: "rulestream-<seconds since the epoch>"
  std::string external_id;   // AssumeRole only; empty: none
  std::optional<int> duration_seconds;
  std::chrono::milliseconds timeout{10000};
};

// STS AssumeRoleWithWebIdentity (a Query API POST, unsigned: the token is the proof), as a pod
// on EKS with IAM roles for service accounts does. `source` becomes the credentials' source.
// Throws StorageError naming `source`, the endpoint and STS's error code and message; never the
// token.
S3Credentials assume_role_with_web_identity(const StsEndpoint& endpoint,
                                            const AssumeRoleRequest& request,
                                            const std::string& web_identity_token,
                                            const std::string& source);

// STS AssumeRole, signed with SigV4 (service "sts") by `caller` (role_arn + source_profile in
// the config file). Errors as above, naming the caller by describe() only.
S3Credentials assume_role(const StsEndpoint& endpoint, const AssumeRoleRequest& request,
                          const S3Credentials& caller, const std::string& source);

}  // namespace rulestream
