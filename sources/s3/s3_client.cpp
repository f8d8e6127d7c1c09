#include "sources/s3/s3_client.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

#include "core/model/curl_global.hpp"
#include "core/model/exceptions.hpp"
#include "sources/s3/aws_sigv4.hpp"

namespace rulestream {
namespace {

enum class Method { Get, Head, Put };

struct Request {
  Method method = Method::Get;
  std::string bucket;
  std::string key;  // empty: the bucket itself
  std::string query;
  std::optional<std::string> listed_prefix;  // a listing's prefix, to name it in errors
  std::optional<S3ByteRange> range;
  std::span<const std::byte> body;  // Put only; must outlive the request
};

struct Response {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::string body;
  std::string curl_error;
  curl_off_t file_time = -1;       // Last-Modified in seconds since the epoch (HEAD), or -1
  curl_off_t content_length = -1;  // Content-Length (HEAD: the object's size), or -1
  int attempts = 0;
  std::shared_ptr<const S3Credentials> signed_with;  // the credentials of the last attempt
  bool token_renewed = false;  // sent again once already after an expired token
};

// One request on one easy handle: what the callbacks write to and read from.
struct Transfer {
  CURL* handle = nullptr;
  const Request* request = nullptr;
  Response* response = nullptr;
  curl_slist* headers = nullptr;
  std::size_t uploaded = 0;
  std::array<char, CURL_ERROR_SIZE> error{};
};

// What a failed request was about: the object, or the listing of a prefix.
std::string where_of(const Request& request) {
  if (request.listed_prefix) {
    return "s3://" + request.bucket + (request.listed_prefix->empty() ? "" : "/") +
           *request.listed_prefix + " (listing)";
  }
  return "s3://" + request.bucket + (request.key.empty() ? "" : "/" + request.key);
}

// Failures that may pass if the same request is sent again.
bool is_transient(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
      return true;
    default:
      return false;
  }
}

bool is_retryable(const Response& response) {
  if (response.code != CURLE_OK) return is_transient(response.code);
  switch (response.status) {
    case 429:  // TooManyRequests
    case 500:  // InternalError
    case 502:
    case 503:  // SlowDown, ServiceUnavailable
    case 504:
      return true;
    case 400:  // S3 closes an idle upload with 400 RequestTimeout
      return parse_s3_error(response.body).code == "RequestTimeout";
    default:
      return false;
  }
}

std::size_t collect_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  transfer->response->body.append(data, size * count);
  return size * count;
}

std::size_t send_body(char* buffer, std::size_t size, std::size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const auto body = transfer->request->body;
  const std::size_t chunk = std::min(size * count, body.size() - transfer->uploaded);
  std::copy_n(reinterpret_cast<const char*>(body.data()) + transfer->uploaded, chunk, buffer);
  transfer->uploaded += chunk;
  return chunk;
}

std::chrono::milliseconds backoff_delay(const S3ClientOptions& options, int retry) {
  thread_local std::mt19937_64 random{std::random_device{}()};
  const auto doubling = options.backoff_base.count() << std::min(retry - 1, 20);
  const std::int64_t ceiling = std::min<std::int64_t>(options.backoff_cap.count(), doubling);
  std::uniform_int_distribution<std::int64_t> jitter(ceiling / 2, ceiling);
  return std::chrono::milliseconds(jitter(random));
}

// S3 says the session token has expired: new credentials may pass. (A bad token is
// InvalidToken, which new credentials from the same place would not mend.)
bool is_expired_token(const Response& response) {
  if (response.code != CURLE_OK || (response.status != 400 && response.status != 403)) {
    return false;
  }
  const std::string code = parse_s3_error(response.body).code;
  return code == "ExpiredToken" || code == "ExpiredTokenException" ||
         code == "TokenRefreshRequired";
}

// The bytes of a ranged answer: 206 is the range; a server that ignores Range sends the whole
// object (200), of which we cut the range; 416 means the range starts past the end.
SharedBytes range_of(Response& response, S3ByteRange range) {
  if (response.status == 416) return {};
  if (response.status == 200) {
    if (range.offset >= response.body.size()) return {};
    response.body = response.body.substr(range.offset, range.length);
  } else if (response.body.size() > range.length) {
    response.body.resize(range.length);
  }
  return SharedBytes::from_string(std::move(response.body));
}

}  // namespace

class S3Client::Impl {
 public:
  Impl(S3Endpoint endpoint, std::shared_ptr<const RefreshingCredentials> credentials,
       S3ClientOptions options)
      : endpoint_(std::move(endpoint)), credentials_(std::move(credentials)), options_(options) {
    if (options_.max_attempts < 1) {
      throw std::invalid_argument("S3 client: max_attempts must be at least 1, not " +
                                  std::to_string(options_.max_attempts));
    }
    ensure_curl_initialised();
    share_ = curl_share_init();
    if (share_ == nullptr) throw StorageError("S3 client: curl_share_init failed");
    curl_share_setopt(share_, CURLSHOPT_LOCKFUNC, &Impl::lock);
    curl_share_setopt(share_, CURLSHOPT_UNLOCKFUNC, &Impl::unlock);
    curl_share_setopt(share_, CURLSHOPT_USERDATA, this);
    // One connection cache for every handle: keep-alive connections outlive the request that
    // opened them, whichever thread sends the next one.
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  }

  ~Impl() {
    for (CURL* handle : idle_) curl_easy_cleanup(handle);
    curl_share_cleanup(share_);
  }

  // Sends the requests (in parallel when there are several), retrying those that fail in a way
  // that may pass, with backoff between rounds, and once at once those whose session token had
  // expired, after renewing the credentials. Returns the last answer to each.
  std::vector<Response> execute(const std::vector<Request>& requests) const {
    std::vector<Response> responses(requests.size());
    std::vector<std::size_t> pending(requests.size());
    std::iota(pending.begin(), pending.end(), std::size_t{0});
    for (int attempt = 1;; ++attempt) {
      run_batch(requests, responses, pending);
      std::vector<std::size_t> again;
      std::vector<std::size_t> renewed;
      for (const std::size_t index : pending) {
        if (is_retryable(responses[index])) again.push_back(index);
        if (renewable(responses[index])) renewed.push_back(index);
      }
      if (attempt >= options_.max_attempts) again.clear();
      if (again.empty() && renewed.empty()) return responses;
      retries_ += again.size() + renewed.size();
      // Renewed requests need no backoff: alone, they go again at once; beside requests that
      // must wait theirs, they go with them.
      if (!again.empty()) std::this_thread::sleep_for(backoff_delay(options_, attempt));
      pending = std::move(again);
      for (const std::size_t index : renewed) {
        responses[index].token_renewed = true;
        pending.push_back(index);
      }
    }
  }

  // An expired token not yet renewed for this request, whose credentials can be renewed (this
  // renews them, unless another request did first).
  bool renewable(const Response& response) const {
    return !response.token_renewed && is_expired_token(response) &&
           credentials_->renew_rejected(response.signed_with);
  }

  Response execute_one(const Request& request) const {
    return std::move(execute({request}).front());
  }

  [[noreturn]] void fail(const Request& request, const Response& response) const {
    const std::string where = where_of(request);
    const std::string tries =
        response.attempts > 1 ? " (after " + std::to_string(response.attempts) + " attempts)" : "";
    if (response.code != CURLE_OK) {
      throw StorageError(where + ": " + response.curl_error + tries);
    }
    const S3ErrorDocument error = parse_s3_error(response.body);
    const std::string status =
        "HTTP " + std::to_string(response.status) + (error.code.empty() ? "" : " " + error.code);
    const std::string message = error.message.empty() ? "" : ": " + error.message;
    // A bad or expired session token is a 400, not a 403, but the same mistake to the user.
    const bool bad_token = error.code == "InvalidToken" || error.code == "ExpiredToken" ||
                           error.code == "TokenRefreshRequired";
    if (response.status == 403 || bad_token) {
      const auto& credentials = response.signed_with ? response.signed_with : current();
      throw StorageAccessDenied(
          where + ": " + (bad_token ? "S3 refused the session token" : "access denied by S3") +
          " (" + status + message + ")" +
          (response.token_renewed ? " again after the credentials were renewed" : "") +
          "; check the credentials (" + credentials->describe() +
          ") and that they may read this bucket and key");
    }
    if (response.status == 404) {
      if (error.code == "NoSuchBucket" || (request.key.empty() && error.code.empty())) {
        throw S3NotFoundError("s3://" + request.bucket + ": no such bucket (" + status + ")", true,
                              status);
      }
      throw S3NotFoundError(where + ": no such object (" + status + ")", false, status);
    }
    if (response.status == 301 || error.code == "PermanentRedirect" ||
        error.code == "AuthorizationHeaderMalformed") {
      throw StorageError(where + ": " + status + message + " (is the bucket in region " +
                         endpoint_.region + "? set AWS_REGION to its region)");
    }
    throw StorageError(where + ": S3 answered " + status + message + tries);
  }

  // One page of ListObjectsV2; `delimiter` empty: every key under `prefix`.
  S3ListPage list_page(std::string_view bucket, std::string_view prefix,
                       std::string_view start_after, std::string_view continuation_token,
                       int max_keys, std::string_view delimiter) const {
    std::vector<std::pair<std::string, std::string>> parameters{{"list-type", "2"},
                                                                {"prefix", std::string(prefix)}};
    if (!start_after.empty()) parameters.emplace_back("start-after", std::string(start_after));
    if (!continuation_token.empty()) {
      parameters.emplace_back("continuation-token", std::string(continuation_token));
    }
    if (!delimiter.empty()) parameters.emplace_back("delimiter", std::string(delimiter));
    if (max_keys != 1000) parameters.emplace_back("max-keys", std::to_string(max_keys));
    Request listing = request(Method::Get, bucket, {});
    listing.query = canonical_query(std::move(parameters));
    listing.listed_prefix = std::string(prefix);
    ++lists_;
    const Response response = execute_one(listing);
    if (response.code != CURLE_OK || response.status != 200) fail(listing, response);
    return parse_list_objects_v2(response.body,
                                 "s3://" + std::string(bucket) + "/" + std::string(prefix));
  }

  Request request(Method method, std::string_view bucket, std::string_view key) const {
    Request made;
    made.method = method;
    made.bucket = std::string(bucket);
    made.key = std::string(key);
    return made;
  }

  std::shared_ptr<const S3Credentials> current() const { return credentials_->current(); }

  const S3Endpoint endpoint_;
  const std::shared_ptr<const RefreshingCredentials> credentials_;
  const S3ClientOptions options_;
  mutable std::atomic<std::uint64_t> lists_{0};
  mutable std::atomic<std::uint64_t> gets_{0};
  mutable std::atomic<std::uint64_t> heads_{0};
  mutable std::atomic<std::uint64_t> puts_{0};
  mutable std::atomic<std::uint64_t> retries_{0};

 private:
  static void lock(CURL*, curl_lock_data data, curl_lock_access, void* user) {
    static_cast<Impl*>(user)->share_locks_.at(static_cast<std::size_t>(data)).lock();
  }
  static void unlock(CURL*, curl_lock_data data, void* user) {
    static_cast<Impl*>(user)->share_locks_.at(static_cast<std::size_t>(data)).unlock();
  }

  CURL* acquire() const {
    {
      std::lock_guard lock(pool_mutex_);
      if (!idle_.empty()) {
        CURL* handle = idle_.back();
        idle_.pop_back();
        return handle;
      }
    }
    CURL* handle = curl_easy_init();
    if (handle == nullptr) throw StorageError("S3 client: curl_easy_init failed");
    return handle;
  }

  void release(CURL* handle) const {
    std::lock_guard lock(pool_mutex_);
    idle_.push_back(handle);
  }

  void configure(Transfer& transfer) const {
    const Request& request = *transfer.request;
    Response& response = *transfer.response;
    const int attempts = response.attempts + 1;
    const bool token_renewed = response.token_renewed;
    response = Response{};
    response.attempts = attempts;
    response.token_renewed = token_renewed;
    response.signed_with = current();  // renewed here when they near their expiration
    CURL* handle = transfer.handle;
    curl_easy_reset(handle);
    const std::string url = endpoint_.url(request.bucket, request.key, request.query);
    curl_easy_setopt(handle, CURLOPT_URL, url.c_str());
    transfer.headers = curl_slist_append(nullptr, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    transfer.headers =
        sign_with_sigv4(handle, *response.signed_with, endpoint_.region, "s3", transfer.headers);
    // No "Expect:" (to drop 100-continue): libcurl 7.88 signs a header it was told to remove, and
    // the signature then names a header the server never gets.
    curl_easy_setopt(handle, CURLOPT_HTTPHEADER, transfer.headers);
    curl_easy_setopt(handle, CURLOPT_SHARE, share_);
    curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
    // Keys are names, not paths: "a/../b" is a key of its own and must not be folded.
    curl_easy_setopt(handle, CURLOPT_PATH_AS_IS, 1L);
    curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(options_.connect_timeout.count()));
    curl_easy_setopt(handle, CURLOPT_TIMEOUT_MS,
                     static_cast<long>(options_.request_timeout.count()));
    curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, &collect_body);
    curl_easy_setopt(handle, CURLOPT_WRITEDATA, &transfer);
    curl_easy_setopt(handle, CURLOPT_ERRORBUFFER, transfer.error.data());
    curl_easy_setopt(handle, CURLOPT_PRIVATE, &transfer);
    switch (request.method) {
      case Method::Get:
        break;
      case Method::Head:
        curl_easy_setopt(handle, CURLOPT_NOBODY, 1L);
        curl_easy_setopt(handle, CURLOPT_FILETIME, 1L);
        break;
      case Method::Put:
        curl_easy_setopt(handle, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(handle, CURLOPT_READFUNCTION, &send_body);
        curl_easy_setopt(handle, CURLOPT_READDATA, &transfer);
        curl_easy_setopt(handle, CURLOPT_INFILESIZE_LARGE,
                         static_cast<curl_off_t>(request.body.size()));
        break;
    }
    if (request.range) {
      const std::string range = std::to_string(request.range->offset) + "-" +
                                std::to_string(request.range->offset + request.range->length - 1);
      curl_easy_setopt(handle, CURLOPT_RANGE, range.c_str());  // libcurl copies the string
    }
  }

  void finish(Transfer& transfer, CURLcode code) const {
    Response& response = *transfer.response;
    response.code = code;
    curl_easy_getinfo(transfer.handle, CURLINFO_RESPONSE_CODE, &response.status);
    curl_easy_getinfo(transfer.handle, CURLINFO_FILETIME_T, &response.file_time);
    curl_easy_getinfo(transfer.handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T,
                      &response.content_length);
    if (code != CURLE_OK) {
      response.curl_error =
          transfer.error[0] != '\0' ? std::string(transfer.error.data()) : curl_easy_strerror(code);
    }
  }

  void run_batch(const std::vector<Request>& requests, std::vector<Response>& responses,
                 const std::vector<std::size_t>& pending) const {
    // Sized once: the callbacks hold pointers into it.
    std::vector<Transfer> transfers(pending.size());
    for (std::size_t i = 0; i < pending.size(); ++i) {
      transfers[i].request = &requests[pending[i]];
      transfers[i].response = &responses[pending[i]];
    }
    struct Cleanup {
      const Impl& impl;
      std::vector<Transfer>& transfers;
      ~Cleanup() {
        for (auto& transfer : transfers) {
          if (transfer.handle != nullptr) impl.release(transfer.handle);
          curl_slist_free_all(transfer.headers);
        }
      }
    } cleanup{*this, transfers};
    for (auto& transfer : transfers) {
      transfer.handle = acquire();
      configure(transfer);
    }
    if (transfers.size() == 1) {
      finish(transfers.front(), curl_easy_perform(transfers.front().handle));
      return;
    }
    run_multi(transfers);
  }

  void run_multi(std::vector<Transfer>& transfers) const {
    CURLM* multi = curl_multi_init();
    if (multi == nullptr) throw StorageError("S3 client: curl_multi_init failed");
    curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, options_.max_parallel);
    for (auto& transfer : transfers) curl_multi_add_handle(multi, transfer.handle);
    int running = 0;
    while (true) {
      const CURLMcode status = curl_multi_perform(multi, &running);
      int queued = 0;
      while (CURLMsg* message = curl_multi_info_read(multi, &queued)) {
        if (message->msg != CURLMSG_DONE) continue;
        Transfer* transfer = nullptr;
        curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &transfer);
        finish(*transfer, message->data.result);
      }
      if (running == 0 || status != CURLM_OK) break;
      curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
    }
    for (auto& transfer : transfers) curl_multi_remove_handle(multi, transfer.handle);
    curl_multi_cleanup(multi);
  }

  CURLSH* share_ = nullptr;
  mutable std::array<std::mutex, CURL_LOCK_DATA_LAST> share_locks_;
  mutable std::mutex pool_mutex_;
  mutable std::vector<CURL*> idle_;
};

S3Client::S3Client(S3Endpoint endpoint, S3Credentials credentials, S3ClientOptions options)
    : S3Client(std::move(endpoint),
               std::make_shared<const RefreshingCredentials>(std::move(credentials)), options) {}

S3Client::S3Client(S3Endpoint endpoint, std::shared_ptr<const RefreshingCredentials> credentials,
                   S3ClientOptions options)
    : impl_(std::make_unique<Impl>(std::move(endpoint), std::move(credentials), options)) {}

S3Client::~S3Client() = default;

S3ListPage S3Client::list_page(std::string_view bucket, std::string_view prefix,
                               std::string_view start_after, std::string_view continuation_token,
                               int max_keys) const {
  return impl_->list_page(bucket, prefix, start_after, continuation_token, max_keys, {});
}

std::vector<S3ObjectInfo> S3Client::list(std::string_view bucket, std::string_view prefix,
                                         std::string_view start_after,
                                         std::uint64_t* requests) const {
  std::vector<S3ObjectInfo> objects;
  std::string token;
  while (true) {
    S3ListPage page = list_page(bucket, prefix, start_after, token);
    if (requests != nullptr) ++*requests;
    std::move(page.objects.begin(), page.objects.end(), std::back_inserter(objects));
    if (!page.truncated) return objects;
    token = std::move(page.next_continuation_token);
  }
}

std::vector<std::string> S3Client::list_prefixes(std::string_view bucket, std::string_view prefix,
                                                 std::uint64_t* requests, int page_size) const {
  std::vector<std::string> prefixes;
  std::string token;
  while (true) {
    S3ListPage page = impl_->list_page(bucket, prefix, {}, token, page_size, "/");
    if (requests != nullptr) ++*requests;
    std::move(page.common_prefixes.begin(), page.common_prefixes.end(),
              std::back_inserter(prefixes));
    if (!page.truncated) return prefixes;
    token = std::move(page.next_continuation_token);
  }
}

std::optional<S3ObjectInfo> S3Client::head(std::string_view bucket, std::string_view key) const {
  const Request request = impl_->request(Method::Head, bucket, key);
  ++impl_->heads_;
  const Response response = impl_->execute_one(request);
  if (response.code == CURLE_OK && response.status == 404) return std::nullopt;
  if (response.code != CURLE_OK || response.status != 200) impl_->fail(request, response);
  S3ObjectInfo info;
  info.key = std::string(key);
  // HEAD's Content-Length is the object's size; libcurl reports it as the download length.
  info.size = static_cast<std::uint64_t>(std::max<curl_off_t>(response.content_length, 0));
  info.modified_ns = epoch_seconds_to_ns(static_cast<std::int64_t>(response.file_time));
  return info;
}

SharedBytes S3Client::get(std::string_view bucket, std::string_view key) const {
  const Request request = impl_->request(Method::Get, bucket, key);
  ++impl_->gets_;
  Response response = impl_->execute_one(request);
  if (response.code != CURLE_OK || response.status != 200) impl_->fail(request, response);
  return SharedBytes::from_string(std::move(response.body));
}

SharedBytes S3Client::get_range(std::string_view bucket, std::string_view key,
                                S3ByteRange range) const {
  const S3ByteRange ranges[] = {range};
  return std::move(get_ranges(bucket, key, ranges).front());
}

std::vector<SharedBytes> S3Client::get_ranges(std::string_view bucket, std::string_view key,
                                              std::span<const S3ByteRange> ranges) const {
  std::vector<SharedBytes> results(ranges.size());
  std::vector<Request> requests;
  std::vector<std::size_t> asked;  // the index in `ranges` of each request
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i].length == 0) continue;  // nothing to fetch (and "a-(a-1)" is no range)
    Request request = impl_->request(Method::Get, bucket, key);
    request.range = ranges[i];
    requests.push_back(std::move(request));
    asked.push_back(i);
  }
  if (requests.empty()) return results;
  impl_->gets_ += requests.size();
  std::vector<Response> responses = impl_->execute(requests);
  for (std::size_t j = 0; j < requests.size(); ++j) {
    Response& response = responses[j];
    const bool answered =
        response.code == CURLE_OK &&
        (response.status == 200 || response.status == 206 || response.status == 416);
    if (!answered) impl_->fail(requests[j], response);
    results[asked[j]] = range_of(response, ranges[asked[j]]);
  }
  return results;
}

void S3Client::put(std::string_view bucket, std::string_view key,
                   std::span<const std::byte> body) const {
  Request request = impl_->request(Method::Put, bucket, key);
  request.body = body;
  ++impl_->puts_;
  const Response response = impl_->execute_one(request);
  if (response.code != CURLE_OK || response.status != 200) impl_->fail(request, response);
}

void S3Client::create_bucket(std::string_view bucket) const {
  // Outside us-east-1, S3 wants the region in the body.
  std::string configuration;
  if (impl_->endpoint_.region != "us-east-1") {
    configuration =
        "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
        "<LocationConstraint>" +
        impl_->endpoint_.region + "</LocationConstraint></CreateBucketConfiguration>";
  }
  Request request = impl_->request(Method::Put, bucket, {});
  request.body = std::as_bytes(std::span(configuration));
  ++impl_->puts_;
  const Response response = impl_->execute_one(request);
  if (response.code != CURLE_OK || response.status != 200) impl_->fail(request, response);
}

S3RequestCounts S3Client::counts() const {
  return {impl_->lists_.load(), impl_->gets_.load(), impl_->heads_.load(), impl_->puts_.load(),
          impl_->retries_.load()};
}

const S3Endpoint& S3Client::endpoint() const {
  return impl_->endpoint_;
}

std::shared_ptr<const S3Credentials> S3Client::credentials() const {
  return impl_->current();
}

}  // namespace rulestream
