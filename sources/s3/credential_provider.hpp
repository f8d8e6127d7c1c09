#pragma once

#include <memory>
#include <string>

#include "sources/s3/s3_credentials.hpp"

namespace rulestream {

// One place credentials come from (the environment, a profile, STS, a container agent, the
// instance metadata service, a command), asked again when temporary ones near their expiry.
//
// Concurrency: fetch() is called by one thread at a time (RefreshingCredentials serialises its
// calls), so a provider may keep state between fetches without a lock of its own.
class CredentialProvider {
 public:
  virtual ~CredentialProvider() = default;

  // Fresh credentials: `expiration` set when they are temporary, `source` saying where they came
  // from (the provider and its file or URL); `region` is left to the caller. Throws StorageError
  // naming the provider and the file or URL it read, and never a secret, a session token or a
  // web-identity token.
  virtual S3Credentials fetch() = 0;

  // Whether fetching again may bring other credentials (false for fixed keys: when S3 refuses
  // them, asking again is pointless).
  virtual bool renewable() const { return true; }
};

// Credentials that never change (keys in the environment or in a profile).
class FixedCredentialProvider final : public CredentialProvider {
 public:
  explicit FixedCredentialProvider(S3Credentials credentials)
      : credentials_(std::move(credentials)) {}
  S3Credentials fetch() override { return credentials_; }
  bool renewable() const override { return false; }

 private:
  S3Credentials credentials_;
};

// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), source "environment";
// nullptr when neither is set. Throws StorageError when only one of the pair is set (a
// half-configured shell is a mistake worth naming).
std::unique_ptr<CredentialProvider> environment_credential_provider(
    const EnvironmentLookup& environment);

// The token in a file (a web-identity token, a container authorization token), read anew on
// each fetch because the platform rotates it, without surrounding white space. Throws
// StorageError naming `what` and the path when it cannot be read or is empty; never the token.
std::string read_token_file(const std::string& path, const std::string& what);

}  // namespace rulestream
