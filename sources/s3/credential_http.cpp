#include "sources/s3/credential_http.hpp"

#include <curl/curl.h>

#include <array>
#include <memory>

#include "core/model/curl_global.hpp"
#include "core/model/exceptions.hpp"
#include "sources/s3/aws_sigv4.hpp"

namespace rulestream {
namespace {

std::size_t collect(char* data, std::size_t size, std::size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

}  // namespace

CredentialHttpResponse send_credential_request(const CredentialHttpRequest& request,
                                               const std::string& what) {
  ensure_curl_initialised();
  const std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> handle(curl_easy_init(),
                                                                   &curl_easy_cleanup);
  if (!handle) throw StorageError(what + ": curl_easy_init failed");
  curl_slist* headers = nullptr;
  for (const auto& header : request.headers) headers = curl_slist_append(headers, header.c_str());
  if (request.sign_as != nullptr) {
    headers = sign_with_sigv4(handle.get(), *request.sign_as, request.sign_region, "sts", headers);
  }
  const std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> header_list(
      headers, &curl_slist_free_all);
  CredentialHttpResponse response;
  std::array<char, CURL_ERROR_SIZE> error{};
  CURL* easy = handle.get();
  curl_easy_setopt(easy, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.timeout.count()));
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &collect);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, error.data());
  if (request.bypass_proxy) curl_easy_setopt(easy, CURLOPT_NOPROXY, "*");
  if (request.method != "GET") {
    // PUT and POST both send the body (empty for the metadata token's PUT) from memory.
    curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, static_cast<long>(request.body.size()));
    curl_easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.c_str());
    if (request.method != "POST")
      curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  const CURLcode code = curl_easy_perform(easy);
  if (code != CURLE_OK) {
    throw StorageError(what + ": " + request.method + " " + request.url + ": " +
                       (error[0] != '\0' ? std::string(error.data()) : curl_easy_strerror(code)));
  }
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

}  // namespace rulestream
