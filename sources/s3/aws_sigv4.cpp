#include "sources/s3/aws_sigv4.hpp"

namespace rulestream {

curl_slist* sign_with_sigv4(CURL* handle, const S3Credentials& credentials,
                            const std::string& region, const std::string& service,
                            curl_slist* headers) {
  const std::string scope = "aws:amz:" + region + ":" + service;
  curl_easy_setopt(handle, CURLOPT_AWS_SIGV4, scope.c_str());  // libcurl copies strings
  curl_easy_setopt(handle, CURLOPT_USERNAME, credentials.access_key_id.c_str());
  curl_easy_setopt(handle, CURLOPT_PASSWORD, credentials.secret_access_key.c_str());
  if (!credentials.session_token.empty()) {
    const std::string token = "x-amz-security-token: " + credentials.session_token;
    headers = curl_slist_append(headers, token.c_str());
  }
  return headers;
}

}  // namespace rulestream
