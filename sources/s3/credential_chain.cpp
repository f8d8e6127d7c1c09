#include "sources/s3/credential_chain.hpp"

#include "core/model/exceptions.hpp"
#include "sources/s3/aws_profile_files.hpp"
#include "sources/s3/instance_metadata_credentials.hpp"
#include "sources/s3/profile_credentials.hpp"
#include "sources/s3/role_credentials.hpp"

namespace rulestream {
namespace {

std::string region_of(const EnvironmentLookup& environment,
                      const std::optional<AwsProfile>& profile) {
  if (auto region = non_empty_variable(environment, "AWS_REGION")) return *region;
  if (auto region = non_empty_variable(environment, "AWS_DEFAULT_REGION")) return *region;
  if (profile) {
    const auto it = profile->config.find("region");  // the config file's, as the CLI reads it
    if (it != profile->config.end() && !it->second.empty()) return it->second;
  }
  return "us-east-1";
}

std::unique_ptr<CredentialProvider> web_identity_provider(const EnvironmentLookup& environment,
                                                          const StsEndpoint& sts) {
  const auto token_file = non_empty_variable(environment, "AWS_WEB_IDENTITY_TOKEN_FILE");
  const auto role_arn = non_empty_variable(environment, "AWS_ROLE_ARN");
  if (!token_file && !role_arn) return nullptr;
  if (!token_file || !role_arn) {
    throw StorageError(std::string(token_file ? "AWS_WEB_IDENTITY_TOKEN_FILE is set but "
                                                "AWS_ROLE_ARN is not"
                                              : "AWS_ROLE_ARN is set but "
                                                "AWS_WEB_IDENTITY_TOKEN_FILE is not") +
                       ": a web identity needs both");
  }
  AssumeRoleRequest request;
  request.role_arn = *role_arn;
  request.session_name = non_empty_variable(environment, "AWS_ROLE_SESSION_NAME").value_or("");
  return std::make_unique<WebIdentityCredentialProvider>(sts, std::move(request), *token_file);
}

}  // namespace

std::shared_ptr<RefreshingCredentials> resolve_s3_credentials(
    const EnvironmentLookup& environment, const CredentialChainOptions& options) {
  const std::string profile_name =
      non_empty_variable(environment, "AWS_PROFILE").value_or("default");
  const AwsProfileFiles files(environment);
  const std::string region = region_of(environment, files.profile(profile_name));
  const StsEndpoint sts = StsEndpoint::resolve(environment, region);
  const auto refreshing = [&](std::unique_ptr<CredentialProvider> provider) {
    return std::make_shared<RefreshingCredentials>(std::move(provider), region, options.refresh);
  };

  if (auto provider = environment_credential_provider(environment)) {
    return refreshing(std::move(provider));
  }
  const ProfileCredentialContext context{environment, files, sts, options.container,
                                         options.metadata_timeout};
  if (auto provider = profile_credential_provider(profile_name, context)) {
    return refreshing(std::move(provider));
  }
  if (auto provider = web_identity_provider(environment, sts)) {
    return refreshing(std::move(provider));
  }
  if (auto provider = container_credential_provider(environment, options.container)) {
    return refreshing(std::move(provider));
  }
  std::string instance = "AWS_EC2_METADATA_DISABLED is set";
  if (auto provider = instance_metadata_provider(environment, options.metadata_timeout)) {
    try {
      return refreshing(std::move(provider));
    } catch (const StorageError& error) {
      instance = error.what();
    }
  }
  throw StorageError(
      "no AWS credentials for S3: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or add "
      "profile [" +
      profile_name + "] to " + files.credentials_path() +
      " (AWS_PROFILE picks another profile); there is no web identity "
      "(AWS_WEB_IDENTITY_TOKEN_FILE) or container agent (AWS_CONTAINER_CREDENTIALS_*_URI) "
      "either, and no instance role (" +
      instance + ")");
}

S3Credentials load_s3_credentials(const EnvironmentLookup& environment) {
  return *resolve_s3_credentials(environment)->current();
}

}  // namespace rulestream
