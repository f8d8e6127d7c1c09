#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/exceptions.hpp"
#include "core/model/shared_bytes.hpp"
#include "sources/s3/refreshing_credentials.hpp"
#include "sources/s3/s3_credentials.hpp"
#include "sources/s3/s3_location.hpp"
#include "sources/s3/s3_xml.hpp"

namespace rulestream {

struct S3ClientOptions {
  std::chrono::milliseconds connect_timeout{5000};
  // The whole request, body included (an event file of a few hundred MB on a slow link needs
  // more: --s3-timeout).
  std::chrono::milliseconds request_timeout{60000};
  // Tries per request, the first included. Only failures that may pass are retried: timeouts,
  // refused or dropped connections, 5xx, 429 and SlowDown.
  int max_attempts = 6;
  // Backoff before retry n (n = 1, 2, ...): d = min(cap, base * 2^(n-1)), then a random delay in
  // [d/2, d] ("equal jitter": spread out, yet never so short that an outage is not waited out).
  std::chrono::milliseconds backoff_base{200};
  std::chrono::milliseconds backoff_cap{5000};
  // Connections open at once to the endpoint by one parallel batch (get_ranges).
  long max_parallel = 8;
};

// Requests made so far (for tests and benchmarks; LISTs per poll is the watch's cost).
struct S3RequestCounts {
  std::uint64_t lists = 0;
  std::uint64_t gets = 0;
  std::uint64_t heads = 0;
  std::uint64_t puts = 0;
  std::uint64_t retries = 0;  // attempts after a failed first one (token renewals included)
};

struct S3ByteRange {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};

// S3 answered 404: no such bucket (bucket_missing()), or no such key. `status` is what S3 said
// ("HTTP 404 NoSuchBucket"), so that a caller that knows more (the trial's prefix) can say it
// better.
class S3NotFoundError : public StorageError {
 public:
  S3NotFoundError(const std::string& message, bool bucket_missing, std::string status)
      : StorageError(message), bucket_missing_(bucket_missing), status_(std::move(status)) {}
  bool bucket_missing() const { return bucket_missing_; }
  const std::string& status() const { return status_; }

 private:
  bool bucket_missing_;
  std::string status_;
};

// An S3 (or S3-compatible) client over libcurl: requests signed with SigV4 (CURLOPT_AWS_SIGV4),
// connections kept alive and shared by every request (a curl share of the connection cache), and
// several requests at once through the multi interface where a caller has them.
//
// libcurl 7.88 (Debian 12) quirks this works around: it does not send x-amz-content-sha256
// (we send UNSIGNED-PAYLOAD, which S3 requires to be signed), it signs the query string as written
// (we write it canonical: canonical_query()), and a session token goes in as an
// x-amz-security-token header.
//
// Errors are StorageError naming s3://bucket/key, S3's error code and what to check: 403 names
// the credentials (never the secret), 404 says whether the bucket or the key is missing.
//
// Credentials: each request asks RefreshingCredentials::current() just before it is signed, so
// that temporary credentials are renewed before they expire, however long a watch runs. When
// S3 answers that a session token has expired (ExpiredToken, ExpiredTokenException,
// TokenRefreshRequired), the client has the credentials renewed and sends the request once
// more, at once; fixed credentials are not retried.
// Thread-safe: any number of threads may call at once.
class S3Client {
 public:
  // Fixed credentials, never renewed.
  S3Client(S3Endpoint endpoint, S3Credentials credentials, S3ClientOptions options = {});
  S3Client(S3Endpoint endpoint, std::shared_ptr<const RefreshingCredentials> credentials,
           S3ClientOptions options = {});
  ~S3Client();
  S3Client(const S3Client&) = delete;
  S3Client& operator=(const S3Client&) = delete;

  // One page of ListObjectsV2 (at most max_keys objects, S3 caps it at 1000). `start_after` and
  // `continuation_token` may be empty.
  S3ListPage list_page(std::string_view bucket, std::string_view prefix,
                       std::string_view start_after, std::string_view continuation_token,
                       int max_keys = 1000) const;
  // Every object under `prefix` after `start_after`, in key order, following continuations;
  // adds the LIST requests it made to `*requests` when given.
  std::vector<S3ObjectInfo> list(std::string_view bucket, std::string_view prefix,
                                 std::string_view start_after = {},
                                 std::uint64_t* requests = nullptr) const;

  // The sub-prefixes directly under `prefix` (ListObjectsV2 with delimiter '/': its
  // CommonPrefixes, "prefix/NAME/"), in key order, following continuations; adds the LIST
  // requests it made to `*requests` when given. Objects directly under `prefix` are not listed.
  // `page_size`: entries (objects and prefixes) per page, at most 1000.
  std::vector<std::string> list_prefixes(std::string_view bucket, std::string_view prefix,
                                         std::uint64_t* requests = nullptr,
                                         int page_size = 1000) const;

  // nullopt when there is no such key (the bucket must exist).
  std::optional<S3ObjectInfo> head(std::string_view bucket, std::string_view key) const;

  SharedBytes get(std::string_view bucket, std::string_view key) const;
  // `length` bytes from `offset`, fewer at the end of the object, none past it.
  SharedBytes get_range(std::string_view bucket, std::string_view key, S3ByteRange range) const;
  // Several ranges of one object, fetched in parallel; the results in the order asked.
  std::vector<SharedBytes> get_ranges(std::string_view bucket, std::string_view key,
                                      std::span<const S3ByteRange> ranges) const;

  // Uploads (test fixtures, benchmarks, tools that copy a trial up).
  void put(std::string_view bucket, std::string_view key, std::span<const std::byte> body) const;
  void create_bucket(std::string_view bucket) const;

  S3RequestCounts counts() const;
  const S3Endpoint& endpoint() const;
  // The credentials the next request will be signed with.
  std::shared_ptr<const S3Credentials> credentials() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rulestream
