#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rulestream {

// One object of a listing. `key` is the full key in the bucket.
struct S3ObjectInfo {
  std::string key;
  std::uint64_t size = 0;
  std::int64_t modified_ns = 0;  // LastModified, nanoseconds since the epoch

  friend bool operator==(const S3ObjectInfo&, const S3ObjectInfo&) = default;
};

// One page of ListObjectsV2.
struct S3ListPage {
  std::vector<S3ObjectInfo> objects;
  // With a delimiter: the keys' prefixes up to and including the first delimiter after the
  // listing's prefix ("jobs/run-1/" for "jobs/" and '/'), each once, in key order.
  std::vector<std::string> common_prefixes;
  bool truncated = false;
  std::string next_continuation_token;  // set when truncated
};

// S3's error document (<Error><Code>NoSuchBucket</Code><Message>...</Message></Error>); fields
// are empty when the body is not one (a HEAD has no body, a proxy may answer in HTML).
struct S3ErrorDocument {
  std::string code;
  std::string message;
};

// Parses a ListBucketResult. Throws FormatError naming `where` (the request) when the body is
// not one, or an entry has no key or a size that is not a number.
S3ListPage parse_list_objects_v2(std::string_view xml, const std::string& where);

S3ErrorDocument parse_s3_error(std::string_view xml);

// "2026-11-22T13:56:03.000Z" (ISO 8601, UTC) in nanoseconds since the epoch; 0 if unreadable
// or out of range (epoch_seconds_to_ns).
std::int64_t parse_s3_timestamp(std::string_view text);

// Seconds (and a fraction in nanoseconds) since the epoch as nanoseconds; 0, which storage takes
// for "unknown", for a time before 1970 or after 2262 (what int64 nanoseconds hold): a broken or
// hostile server's date must not overflow.
std::int64_t epoch_seconds_to_ns(std::int64_t seconds, std::int64_t nanoseconds = 0);

}  // namespace rulestream
