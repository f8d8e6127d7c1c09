#pragma once

#include <string>

#include "sources/s3/credential_provider.hpp"

namespace rulestream {

// A profile's credential_process: a command run by /bin/sh whose standard output is
// {"Version": 1, "AccessKeyId", "SecretAccessKey", "SessionToken", "Expiration"} (the last two
// optional). It runs again when the credentials near their expiration. Its standard error goes
// to ours (it may ask the user something); errors name the profile, never the command's output.
class ProcessCredentialProvider final : public CredentialProvider {
 public:
  // `where`: the profile and file that set it ("config file /root/.aws/config [profile x]").
  ProcessCredentialProvider(std::string command, std::string where);
  S3Credentials fetch() override;

 private:
  std::string command_;
  std::string source_;
};

}  // namespace rulestream
