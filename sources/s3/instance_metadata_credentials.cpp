#include "sources/s3/instance_metadata_credentials.hpp"

#include <boost/algorithm/string/predicate.hpp>

#include "core/model/exceptions.hpp"
#include "sources/s3/credential_http.hpp"
#include "sources/s3/credentials_json.hpp"

namespace rulestream {
namespace {

constexpr std::string_view kCredentialsPath = "/latest/meta-data/iam/security-credentials/";

class InstanceMetadataProvider final : public CredentialProvider {
 public:
  InstanceMetadataProvider(std::string endpoint, std::chrono::milliseconds timeout)
      : endpoint_(std::move(endpoint)),
        timeout_(timeout),
        source_("instance metadata " + endpoint_) {}

  S3Credentials fetch() override {
    CredentialHttpRequest token_request = request("PUT", "/latest/api/token");
    token_request.headers.push_back("X-aws-ec2-metadata-token-ttl-seconds: 21600");
    const std::string token = answer(token_request, "a session token");
    if (token.find_first_of("\r\n") != std::string::npos) {
      throw StorageError(source_ + ": the session token has a line break");
    }
    CredentialHttpRequest role_request = request("GET", std::string(kCredentialsPath));
    role_request.headers.push_back("X-aws-ec2-metadata-token: " + token);
    std::string role = answer(role_request, "the instance's role (is an IAM role attached?)");
    role = role.substr(0, role.find_first_of("\r\n"));
    if (role.empty()) throw StorageError(source_ + ": no IAM role is attached to this instance");

    CredentialHttpRequest credentials_request =
        request("GET", std::string(kCredentialsPath) + role);
    credentials_request.headers = role_request.headers;
    const std::string where = source_ + ", role " + role;
    const std::string document = answer(credentials_request, "the credentials of role " + role);
    return parse_credentials_json(document, "Token", where);
  }

 private:
  CredentialHttpRequest request(std::string method, const std::string& path) const {
    CredentialHttpRequest made;
    made.method = std::move(method);
    made.url = endpoint_ + path;
    made.timeout = timeout_;
    made.bypass_proxy = true;
    return made;
  }

  // The body of a 200 answer; anything else is an error saying what was asked for.
  std::string answer(const CredentialHttpRequest& request, const std::string& asked) const {
    CredentialHttpResponse response = send_credential_request(request, source_);
    if (response.status != 200) {
      throw StorageError(source_ + ": asked for " + asked + ", it answered HTTP " +
                         std::to_string(response.status));
    }
    return std::move(response.body);
  }

  std::string endpoint_;
  std::chrono::milliseconds timeout_;
  std::string source_;
};

}  // namespace

std::unique_ptr<CredentialProvider> instance_metadata_provider(const EnvironmentLookup& environment,
                                                               std::chrono::milliseconds timeout) {
  if (boost::algorithm::iequals(
          non_empty_variable(environment, "AWS_EC2_METADATA_DISABLED").value_or("false"), "true")) {
    return nullptr;
  }
  std::string endpoint = non_empty_variable(environment, "AWS_EC2_METADATA_SERVICE_ENDPOINT")
                             .value_or("http://169.254.169.254");
  while (endpoint.ends_with('/')) endpoint.pop_back();
  return std::make_unique<InstanceMetadataProvider>(std::move(endpoint), timeout);
}

}  // namespace rulestream
