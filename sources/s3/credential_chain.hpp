#pragma once

#include <chrono>
#include <memory>

#include "sources/s3/container_credentials.hpp"
#include "sources/s3/refreshing_credentials.hpp"
#include "sources/s3/s3_credentials.hpp"

namespace rulestream {

struct CredentialChainOptions {
  ContainerCredentialOptions container;
  std::chrono::milliseconds metadata_timeout{1000};  // each request to the instance metadata
  CredentialRefreshOptions refresh;
};

// Finds credentials in the order the AWS SDKs use, and keeps them fresh:
//  1. AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN);
//  2. the profile AWS_PROFILE (else "default") in the shared credentials file
//     (AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials) and the config file
//     (AWS_CONFIG_FILE, else ~/.aws/config): role_arn with source_profile or credential_source
//     (STS AssumeRole), or web_identity_token_file; credential_process; keys
//     (profile_credential_provider);
//  3. web identity: AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN (+ AWS_ROLE_SESSION_NAME), STS
//     AssumeRoleWithWebIdentity (EKS);
//  4. a container agent: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or _FULL_URI (ECS, SageMaker);
//  5. the EC2 instance metadata service, IMDSv2, unless AWS_EC2_METADATA_DISABLED=true.
// STS is AWS_ENDPOINT_URL_STS, else AWS_ENDPOINT_URL, else sts.REGION.amazonaws.com.
// The region: AWS_REGION, AWS_DEFAULT_REGION, the config file's profile, else us-east-1.
// The first source that is configured is used: one that is configured but fails (an
// unreadable token file, an agent that refuses) is an error naming it, not a reason to try
// the next. Only an instance metadata service that does not answer counts as "not there".
// Throws StorageError saying what was looked at when nothing provides credentials.
std::shared_ptr<RefreshingCredentials> resolve_s3_credentials(
    const EnvironmentLookup& environment = process_environment(),
    const CredentialChainOptions& options = {});

// The credentials resolve_s3_credentials finds, as they are now.
S3Credentials load_s3_credentials(const EnvironmentLookup& environment = process_environment());

}  // namespace rulestream
