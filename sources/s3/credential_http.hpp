#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "sources/s3/s3_credentials.hpp"

namespace rulestream {

// One request of a credential provider: to STS, a container agent or the instance metadata
// service. Blocking, one try: a provider's caller (RefreshingCredentials) decides when to ask
// again.
struct CredentialHttpRequest {
  std::string method = "GET";  // GET, PUT or POST
  std::string url;
  std::vector<std::string> headers;  // "Name: value"; they may hold tokens, so never printed
  std::string body;                  // POST: form fields, sent as x-www-form-urlencoded
  std::chrono::milliseconds timeout{5000};
  // Link-local and loopback agents are reached directly, whatever http_proxy says.
  bool bypass_proxy = false;
  // Signed with SigV4 for STS in `sign_region` when set (AssumeRole).
  const S3Credentials* sign_as = nullptr;
  std::string sign_region;
};

struct CredentialHttpResponse {
  long status = 0;
  std::string body;
};

// Sends the request. Throws StorageError "`what`: METHOD URL: <what went wrong>" when no answer
// came;
// any HTTP status is an answer, for the caller to judge. Never puts a header or the body in an
// error.
CredentialHttpResponse send_credential_request(const CredentialHttpRequest& request,
                                               const std::string& what);

}  // namespace rulestream
