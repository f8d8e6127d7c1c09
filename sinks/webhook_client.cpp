#include "sinks/webhook_client.hpp"

#include <algorithm>
#include <boost/url/parse.hpp>
#include <functional>

#include "core/model/curl_global.hpp"
#include "core/model/exceptions.hpp"

namespace rulestream {
namespace {

constexpr std::size_t kMaxResponseKept = 4096;  // enough for an error message, bounded
constexpr std::size_t kMaxResponseShown = 200;

// Errors that the same request will meet again however often it is retried.
bool is_permanent(CURLcode code) {
  switch (code) {
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_NOT_BUILT_IN:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
      return true;
    default:
      return false;
  }
}

// A response body is the peer's text: keep it to one short printable line in our messages.
std::string printable_snippet(const std::string& text) {
  std::string out = text.substr(0, kMaxResponseShown);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (text.size() > kMaxResponseShown) out += "…";
  return out;
}

// The parts of a URL that may carry a token, longest first so that a short part never breaks up
// a longer one before that is replaced. Short path segments and values ("v1", "hook") stay:
// blanking them would mangle ordinary words, and no token is that short.
std::vector<std::string> secrets_of(const std::string& url) {
  std::vector<std::string> secrets;
  const auto parsed = boost::urls::parse_uri(url);
  if (!parsed) return secrets;
  const auto keep = [&](auto part, std::size_t min_size) {
    if (part.size() >= min_size) secrets.emplace_back(part.data(), part.size());
  };
  keep(parsed->encoded_resource(), 2);
  for (const auto segment : parsed->encoded_segments()) keep(segment, 8);
  for (const auto param : parsed->encoded_params()) keep(param.value, 8);
  keep(parsed->encoded_userinfo(), 4);
  keep(parsed->encoded_password(), 4);
  std::ranges::stable_sort(secrets, std::greater{}, &std::string::size);
  return secrets;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  if (from.empty()) return;
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

}  // namespace

WebhookClient::WebhookClient(const std::string& url, std::string redacted_url,
                             std::chrono::milliseconds timeout, const std::string& bearer_token)
    : url_(url),
      redacted_url_(std::move(redacted_url)),
      secrets_(secrets_of(url)),
      timeout_(timeout) {
  if (!bearer_token.empty()) {
    secrets_.insert(secrets_.begin(), bearer_token);
    std::ranges::stable_sort(secrets_, std::greater{}, &std::string::size);
  }
  ensure_curl_initialised();
  curl_ = curl_easy_init();
  if (curl_ == nullptr)
    throw RulestreamError("webhook " + redacted_url_ + ": curl_easy_init failed");
  // curl_slist_append answers null when out of memory, leaving the list as it was.
  const auto add_header = [this](const std::string& header) {
    if (headers_ == nullptr) return;
    curl_slist* longer = curl_slist_append(headers_, header.c_str());
    if (longer == nullptr) curl_slist_free_all(headers_);
    headers_ = longer;
  };
  headers_ = curl_slist_append(nullptr, "Content-Type: application/json");
  // Without this curl sends "Expect: 100-continue" for larger bodies and waits a second for
  // a 100 that many webhook servers never send.
  add_header("Expect:");
  if (!bearer_token.empty()) add_header("Authorization: Bearer " + bearer_token);
  if (headers_ == nullptr) {
    curl_easy_cleanup(curl_);
    throw RulestreamError("webhook " + redacted_url_ + ": out of memory for request headers");
  }

  const auto set = [this](CURLoption option, auto value, const char* name) {
    const CURLcode code = curl_easy_setopt(curl_, option, value);
    if (code != CURLE_OK) {
      curl_slist_free_all(headers_);
      curl_easy_cleanup(curl_);
      throw RulestreamError("webhook " + redacted_url_ + ": libcurl rejected " + name + ": " +
                            curl_easy_strerror(code));
    }
  };
  set(CURLOPT_URL, url_.c_str(), "the URL");
  set(CURLOPT_PROTOCOLS_STR, "http,https", "CURLOPT_PROTOCOLS_STR");
  set(CURLOPT_POST, 1L, "CURLOPT_POST");
  set(CURLOPT_HTTPHEADER, headers_, "CURLOPT_HTTPHEADER");
  set(CURLOPT_USERAGENT, "rulestream/0.1", "CURLOPT_USERAGENT");
  set(CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()), "CURLOPT_TIMEOUT_MS");
  set(CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeout.count()), "CURLOPT_CONNECTTIMEOUT_MS");
  // Timeouts must not use SIGALRM: this runs on a worker thread of a multi-threaded process.
  set(CURLOPT_NOSIGNAL, 1L, "CURLOPT_NOSIGNAL");
  // A redirect could carry the event (and its headers) to another host.
  set(CURLOPT_FOLLOWLOCATION, 0L, "CURLOPT_FOLLOWLOCATION");
  set(CURLOPT_TCP_KEEPALIVE, 1L, "CURLOPT_TCP_KEEPALIVE");
  set(CURLOPT_WRITEFUNCTION, &WebhookClient::collect_response, "CURLOPT_WRITEFUNCTION");
  set(CURLOPT_WRITEDATA, static_cast<void*>(this), "CURLOPT_WRITEDATA");
  set(CURLOPT_ERRORBUFFER, error_buffer_.data(), "CURLOPT_ERRORBUFFER");
}

WebhookClient::~WebhookClient() {
  curl_easy_cleanup(curl_);
  curl_slist_free_all(headers_);
}

WebhookClient::Outcome WebhookClient::post(const std::string& body) {
  response_.clear();
  error_buffer_[0] = '\0';
  // POSTFIELDS does not copy: `body` outlives the perform call below.
  curl_easy_setopt(curl_, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl_, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  const CURLcode code = curl_easy_perform(curl_);
  if (code != CURLE_OK) return failure_from_curl(code);
  long status = 0;
  curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &status);
  return outcome_from_status(status);
}

std::size_t WebhookClient::collect_response(char* data, std::size_t size, std::size_t count,
                                            void* self) {
  auto& response = static_cast<WebhookClient*>(self)->response_;
  const std::size_t length = size * count;
  if (response.size() < kMaxResponseKept) {
    response.append(data, std::min(length, kMaxResponseKept - response.size()));
  }
  return length;  // the rest is read and dropped, so the connection stays reusable
}

WebhookClient::Outcome WebhookClient::failure_from_curl(CURLcode code) const {
  Outcome outcome;
  outcome.retryable = !is_permanent(code);
  if (code == CURLE_OPERATION_TIMEDOUT) {
    outcome.error = "no answer within the " + std::to_string(timeout_.count()) + " ms timeout";
  } else {
    const std::string detail =
        error_buffer_[0] != '\0' ? std::string(error_buffer_.data()) : curl_easy_strerror(code);
    outcome.error = scrub(detail);
  }
  return outcome;
}

WebhookClient::Outcome WebhookClient::outcome_from_status(long status) const {
  Outcome outcome;
  if (status >= 200 && status < 300) {
    outcome.delivered = true;
    return outcome;
  }
  outcome.retryable = status == 408 || status == 429 || status >= 500;
  outcome.error = "HTTP " + std::to_string(status);
  if (status >= 300 && status < 400) outcome.error += " (redirects are not followed)";
  if (const std::string said = printable_snippet(response_); !said.empty()) {
    outcome.error += ": " + scrub(said);
  }
  curl_off_t retry_after = 0;
  if (curl_easy_getinfo(curl_, CURLINFO_RETRY_AFTER, &retry_after) == CURLE_OK && retry_after > 0) {
    outcome.retry_after = std::chrono::seconds(retry_after);
  }
  return outcome;
}

// curl's messages name hosts and ports, not paths; this keeps it that way should one ever
// quote the URL.
std::string WebhookClient::scrub(std::string text) const {
  replace_all(text, url_, redacted_url_);
  for (const std::string& secret : secrets_) replace_all(text, secret, "…");
  return text;
}

}  // namespace rulestream
