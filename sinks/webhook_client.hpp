#pragma once

#include <curl/curl.h>

#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace rulestream {

// One libcurl easy handle that POSTs JSON bodies to one URL, reusing its connection between
// requests (HTTP/1.1 keep-alive). Not thread-safe: the webhook's worker thread owns it.
class WebhookClient {
 public:
  struct Outcome {
    bool delivered = false;  // the server answered 2xx
    bool retryable = false;  // a connection error, a timeout, 408, 429 or 5xx
    // Why it failed ("HTTP 503", "timed out after 100 ms"), never showing the URL's path.
    std::string error;
    // The server's Retry-After, when it sent one.
    std::optional<std::chrono::seconds> retry_after;
  };

  // `redacted_url` replaces the URL wherever curl's own messages might repeat it. A
  // `bearer_token` is sent as "Authorization: Bearer TOKEN" with every request, and, like the
  // URL's secrets, never shown.
  WebhookClient(const std::string& url, std::string redacted_url, std::chrono::milliseconds timeout,
                const std::string& bearer_token = {});
  ~WebhookClient();
  WebhookClient(const WebhookClient&) = delete;
  WebhookClient& operator=(const WebhookClient&) = delete;

  Outcome post(const std::string& body);

 private:
  static std::size_t collect_response(char* data, std::size_t size, std::size_t count, void* self);
  Outcome failure_from_curl(CURLcode code) const;
  Outcome outcome_from_status(long status) const;
  std::string scrub(std::string text) const;

  std::string url_;
  std::string redacted_url_;
  std::vector<std::string> secrets_;  // the path, query, password and token: never shown
  std::chrono::milliseconds timeout_;
  CURL* curl_ = nullptr;
  curl_slist* headers_ = nullptr;
  std::string response_;
  std::array<char, CURL_ERROR_SIZE> error_buffer_{};
};

}  // namespace rulestream
