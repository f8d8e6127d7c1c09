#include "sources/s3/profile_credentials.hpp"

#include <algorithm>
#include <vector>

#include "core/model/exceptions.hpp"
#include "sources/s3/instance_metadata_credentials.hpp"
#include "sources/s3/process_credentials.hpp"
#include "sources/s3/role_credentials.hpp"

namespace rulestream {
namespace {

std::unique_ptr<CredentialProvider> keys_of(const AwsProfile& profile) {
  S3Credentials keys;
  keys.access_key_id = profile.get("aws_access_key_id");
  keys.secret_access_key = profile.get("aws_secret_access_key");
  if (keys.access_key_id.empty() || keys.secret_access_key.empty()) return nullptr;
  keys.session_token = profile.get("aws_session_token");
  keys.source = profile.where("aws_access_key_id");
  return std::make_unique<FixedCredentialProvider>(std::move(keys));
}

class ProfileResolver {
 public:
  explicit ProfileResolver(const ProfileCredentialContext& context) : context_(context) {}

  // `chain`: the profiles that led here through source_profile, outermost first.
  std::unique_ptr<CredentialProvider> resolve(const std::string& name,
                                              std::vector<std::string> chain) {
    const auto profile = context_.files.profile(name);
    if (!profile) {
      if (chain.empty()) return nullptr;
      throw StorageError("profile [" + chain.back() + "] names source_profile " + name +
                         ", which is in neither " + context_.files.config_path() + " nor " +
                         context_.files.credentials_path());
    }
    if (!profile->get("role_arn").empty()) return role(*profile, std::move(chain));
    if (const std::string command = profile->get("credential_process"); !command.empty()) {
      return std::make_unique<ProcessCredentialProvider>(command,
                                                         profile->where("credential_process"));
    }
    auto keys = keys_of(*profile);
    if (!keys && !chain.empty()) {
      throw StorageError("profile [" + name + "], the source_profile of [" + chain.back() +
                         "], has no credentials (" + profile->config_section + ", " +
                         profile->credentials_section + ")");
    }
    return keys;
  }

 private:
  std::unique_ptr<CredentialProvider> role(const AwsProfile& profile,
                                           std::vector<std::string> chain) {
    const std::string where = profile.where("role_arn");
    AssumeRoleRequest request;
    request.role_arn = profile.get("role_arn");
    request.session_name = profile.get("role_session_name");
    request.external_id = profile.get("external_id");
    if (const std::string duration = profile.get("duration_seconds"); !duration.empty()) {
      try {
        request.duration_seconds = std::stoi(duration);
      } catch (const std::exception&) {
        throw StorageError(where + ": duration_seconds '" + duration + "' is not a number");
      }
    }
    const std::string source_profile = profile.get("source_profile");
    const std::string credential_source = profile.get("credential_source");
    const std::string token_file = profile.get("web_identity_token_file");
    std::unique_ptr<CredentialProvider> caller;
    std::string signed_by;
    if (!source_profile.empty()) {
      chain.push_back(profile.name);
      if (source_profile == profile.name) {
        caller = keys_of(profile);  // a profile that names itself signs with its own keys
        if (!caller) throw StorageError(where + ": source_profile names itself, without keys");
      } else if (std::find(chain.begin(), chain.end(), source_profile) != chain.end()) {
        throw StorageError(where + ": source_profile " + source_profile + " loops back");
      } else {
        caller = resolve(source_profile, chain);
      }
      signed_by = "profile [" + source_profile + "]";
    } else if (!credential_source.empty()) {
      caller = credential_source_provider(credential_source, where);
      signed_by = credential_source;
    } else if (!token_file.empty()) {
      return std::make_unique<WebIdentityCredentialProvider>(context_.sts, std::move(request),
                                                             token_file);
    } else {
      throw StorageError(where +
                         ": role_arn needs source_profile, credential_source or "
                         "web_identity_token_file");
    }
    std::string source =
        "role " + request.role_arn + " assumed with " + signed_by + " (" + where + ")";
    return std::make_unique<AssumedRoleCredentialProvider>(context_.sts, std::move(request),
                                                           std::move(caller), std::move(source));
  }

  std::unique_ptr<CredentialProvider> credential_source_provider(const std::string& kind,
                                                                 const std::string& where) {
    std::unique_ptr<CredentialProvider> provider;
    if (kind == "Environment") {
      provider = environment_credential_provider(context_.environment);
    } else if (kind == "EcsContainer") {
      provider = container_credential_provider(context_.environment, context_.container);
    } else if (kind == "Ec2InstanceMetadata") {
      provider = instance_metadata_provider(context_.environment, context_.metadata_timeout);
    } else {
      throw StorageError(where + ": credential_source " + kind +
                         " is not Environment, EcsContainer or Ec2InstanceMetadata");
    }
    if (!provider) {
      throw StorageError(where + ": credential_source " + kind + " provides no credentials here");
    }
    return provider;
  }

  const ProfileCredentialContext& context_;
};

}  // namespace

std::unique_ptr<CredentialProvider> profile_credential_provider(
    const std::string& name, const ProfileCredentialContext& context) {
  return ProfileResolver(context).resolve(name, {});
}

}  // namespace rulestream
