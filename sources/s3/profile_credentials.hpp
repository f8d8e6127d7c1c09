#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "sources/s3/aws_profile_files.hpp"
#include "sources/s3/container_credentials.hpp"
#include "sources/s3/credential_provider.hpp"
#include "sources/s3/sts_client.hpp"

namespace rulestream {

// What a profile's credentials may need beyond the files: the environment (credential_source =
// Environment), STS, and the agents (credential_source = EcsContainer, Ec2InstanceMetadata).
struct ProfileCredentialContext {
  const EnvironmentLookup& environment;
  const AwsProfileFiles& files;
  StsEndpoint sts;
  ContainerCredentialOptions container;
  std::chrono::milliseconds metadata_timeout{1000};
};

// The credentials profile `name` configures, as the AWS CLI reads it:
//  - role_arn: the role, taken on with STS AssumeRole signed by source_profile's credentials
//    (which may be a role in turn, or the profile's own keys when it names itself) or by
//    credential_source (Environment, EcsContainer, Ec2InstanceMetadata); or, with
//    web_identity_token_file, by AssumeRoleWithWebIdentity. role_session_name, external_id
//    and duration_seconds are passed on;
//  - else credential_process: a command that prints them;
//  - else aws_access_key_id and aws_secret_access_key (and aws_session_token).
// nullptr when the profile does not exist or configures none of these. Throws StorageError
// naming the profile and the file for a profile that is half set up (role_arn without a source,
// a source_profile that is missing, has no credentials or loops back).
std::unique_ptr<CredentialProvider> profile_credential_provider(
    const std::string& name, const ProfileCredentialContext& context);

}  // namespace rulestream
