#include "sources/s3/credential_provider.hpp"

#include <fstream>
#include <iterator>

#include "core/model/exceptions.hpp"

namespace rulestream {

std::unique_ptr<CredentialProvider> environment_credential_provider(
    const EnvironmentLookup& environment) {
  const auto id = non_empty_variable(environment, "AWS_ACCESS_KEY_ID");
  const auto secret = non_empty_variable(environment, "AWS_SECRET_ACCESS_KEY");
  if (id.has_value() != secret.has_value()) {
    throw StorageError(
        std::string(id ? "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"
                       : "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not") +
        ": set both, or neither to use the shared credentials file");
  }
  if (!id) return nullptr;
  return std::make_unique<FixedCredentialProvider>(S3Credentials{
      .access_key_id = *id,
      .secret_access_key = *secret,
      .session_token = non_empty_variable(environment, "AWS_SESSION_TOKEN").value_or(""),
      .source = "environment"});
}

std::string read_token_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw StorageError(what + ": cannot read the token file " + path);
  std::string token{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const auto first = token.find_first_not_of(" \t\r\n");
  if (first == std::string::npos)
    throw StorageError(what + ": the token file " + path + " is empty");
  token = token.substr(first, token.find_last_not_of(" \t\r\n") - first + 1);
  return token;
}

}  // namespace rulestream
