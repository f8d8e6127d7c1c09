#include "sources/s3/container_credentials.hpp"

#include <curl/curl.h>

#include <memory>
#include <optional>
#include <utility>

#include "core/model/curl_global.hpp"
#include "core/model/exceptions.hpp"
#include "sources/s3/credential_http.hpp"
#include "sources/s3/credentials_json.hpp"

namespace rulestream {
namespace {

constexpr std::string_view kFullUri = "AWS_CONTAINER_CREDENTIALS_FULL_URI";

// http is allowed to the loopback interface and to the agents' own link-local addresses (ECS,
// EKS Pod Identity); anything else must be https.
bool may_use_plain_http(std::string_view host) {
  if (host == "localhost" || host == "[::1]" || host == "169.254.170.2" ||
      host == "169.254.170.23" || host == "[fd00:ec2::23]") {
    return true;
  }
  // 127.0.0.0/8, written as four decimal numbers
  if (!host.starts_with("127.")) return false;
  int dots = 0;
  for (const char c : host) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  return dots == 3;
}

// The URL's scheme and host as libcurl reads them (what it will connect to); empty when it
// cannot read the URL.
std::pair<std::string, std::string> scheme_and_host(const std::string& uri) {
  const std::unique_ptr<CURLU, decltype(&curl_url_cleanup)> url(curl_url(), &curl_url_cleanup);
  std::pair<std::string, std::string> parts;
  if (!url || curl_url_set(url.get(), CURLUPART_URL, uri.c_str(), 0) != CURLUE_OK) return parts;
  for (auto [part, text] :
       {std::pair{CURLUPART_SCHEME, &parts.first}, std::pair{CURLUPART_HOST, &parts.second}}) {
    char* value = nullptr;
    if (curl_url_get(url.get(), part, &value, 0) == CURLUE_OK) *text = value;
    curl_free(value);
  }
  return parts;
}

std::string checked_full_uri(const std::string& uri) {
  ensure_curl_initialised();
  const auto [scheme, host] = scheme_and_host(uri);
  if (scheme == "https" || (scheme == "http" && may_use_plain_http(host))) return uri;
  throw StorageError(std::string(kFullUri) + " " + uri +
                     ": only https, or http to a loopback address or the ECS/EKS agent "
                     "(169.254.170.2, 169.254.170.23, fd00:ec2::23), may serve credentials");
}

class ContainerCredentialProvider final : public CredentialProvider {
 public:
  ContainerCredentialProvider(std::string url, std::optional<std::string> token,
                              std::optional<std::string> token_file,
                              std::chrono::milliseconds timeout)
      : url_(std::move(url)),
        token_(std::move(token)),
        token_file_(std::move(token_file)),
        timeout_(timeout),
        source_("container credentials " + url_) {}

  S3Credentials fetch() override {
    CredentialHttpRequest request;
    request.url = url_;
    request.timeout = timeout_;
    request.bypass_proxy = true;
    std::optional<std::string> token =
        token_file_ ? read_token_file(*token_file_, source_) : token_;
    if (token) {
      if (token->find_first_of("\r\n") != std::string::npos) {
        throw StorageError(source_ + ": the authorization token has a line break");
      }
      request.headers.push_back("Authorization: " + *token);
    }
    const CredentialHttpResponse response = send_credential_request(request, source_);
    if (response.status != 200) {
      throw StorageError(source_ + ": the agent answered HTTP " + std::to_string(response.status) +
                         (token ? " (check the authorization token)" : ""));
    }
    return parse_credentials_json(response.body, "Token", source_);
  }

 private:
  std::string url_;
  std::optional<std::string> token_;
  std::optional<std::string> token_file_;
  std::chrono::milliseconds timeout_;
  std::string source_;
};

}  // namespace

std::unique_ptr<CredentialProvider> container_credential_provider(
    const EnvironmentLookup& environment, const ContainerCredentialOptions& options) {
  std::string url;
  if (auto relative = non_empty_variable(environment, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")) {
    url = options.relative_host + (relative->starts_with('/') ? "" : "/") + *relative;
  } else if (auto full = non_empty_variable(environment, kFullUri)) {
    url = checked_full_uri(*full);
  } else {
    return nullptr;
  }
  return std::make_unique<ContainerCredentialProvider>(
      std::move(url), non_empty_variable(environment, "AWS_CONTAINER_AUTHORIZATION_TOKEN"),
      non_empty_variable(environment, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"), options.timeout);
}

}  // namespace rulestream
