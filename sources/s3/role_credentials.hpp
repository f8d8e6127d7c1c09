#pragma once

#include <memory>
#include <string>

#include "sources/s3/credential_provider.hpp"
#include "sources/s3/sts_client.hpp"

namespace rulestream {

// A role taken on with a web-identity token (EKS: AWS_WEB_IDENTITY_TOKEN_FILE and
// AWS_ROLE_ARN; or a profile's web_identity_token_file). The file is read on every fetch: the
// kubelet rotates the token.
class WebIdentityCredentialProvider final : public CredentialProvider {
 public:
  WebIdentityCredentialProvider(StsEndpoint endpoint, AssumeRoleRequest request,
                                std::string token_file);
  S3Credentials fetch() override;

 private:
  StsEndpoint endpoint_;
  AssumeRoleRequest request_;
  std::string token_file_;
  std::string source_;
};

// A role taken on with STS AssumeRole, signed with what `caller` provides (a profile's
// role_arn with source_profile or credential_source). The caller's credentials are fetched
// anew each time the role's are.
class AssumedRoleCredentialProvider final : public CredentialProvider {
 public:
  AssumedRoleCredentialProvider(StsEndpoint endpoint, AssumeRoleRequest request,
                                std::unique_ptr<CredentialProvider> caller, std::string source);
  S3Credentials fetch() override;

 private:
  StsEndpoint endpoint_;
  AssumeRoleRequest request_;
  std::unique_ptr<CredentialProvider> caller_;
  std::string source_;
};

}  // namespace rulestream
