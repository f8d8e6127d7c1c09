#include "sources/s3/role_credentials.hpp"

namespace rulestream {

WebIdentityCredentialProvider::WebIdentityCredentialProvider(StsEndpoint endpoint,
                                                             AssumeRoleRequest request,
                                                             std::string token_file)
    : endpoint_(std::move(endpoint)),
      request_(std::move(request)),
      token_file_(std::move(token_file)),
      source_("web identity (token file " + token_file_ + ", role " + request_.role_arn + ")") {}

S3Credentials WebIdentityCredentialProvider::fetch() {
  const std::string token = read_token_file(token_file_, source_);
  return assume_role_with_web_identity(endpoint_, request_, token, source_);
}

AssumedRoleCredentialProvider::AssumedRoleCredentialProvider(
    StsEndpoint endpoint, AssumeRoleRequest request, std::unique_ptr<CredentialProvider> caller,
    std::string source)
    : endpoint_(std::move(endpoint)),
      request_(std::move(request)),
      caller_(std::move(caller)),
      source_(std::move(source)) {}

S3Credentials AssumedRoleCredentialProvider::fetch() {
  S3Credentials caller = caller_->fetch();
  caller.region = endpoint_.region;
  return assume_role(endpoint_, request_, caller, source_);
}

}  // namespace rulestream
