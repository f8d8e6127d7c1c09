#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/model/storage_options.hpp"

namespace rulestream {

// A trial's place in S3, from "s3://bucket/prefix". `prefix` is the key prefix of the trial's
// root: empty (the bucket's top) or ending in '/', so that a trial path appends to it.
struct S3TrialLocation {
  std::string bucket;
  std::string prefix;

  std::string uri() const;  // "s3://bucket/prefix" (without the trailing '/')
};

// Throws StorageError naming the URI when it is not s3://BUCKET[/PREFIX] with a valid bucket
// name (3 to 63 lower-case letters, digits, '.', '-').
S3TrialLocation parse_s3_uri(std::string_view uri);

// Where requests go. AWS itself: virtual-hosted style (https://BUCKET.s3.REGION.amazonaws.com/KEY),
// except for bucket names with dots, which would not match the certificate. An endpoint override
// (an S3-compatible store, --s3-endpoint or AWS_ENDPOINT_URL): path style, BASE/BUCKET/KEY.
// S3Addressing Path or Virtual chooses either for both (virtual on an endpoint:
// SCHEME://BUCKET.HOST:PORT/PATH/KEY, as MinIO with MINIO_DOMAIN or Ceph answer).
struct S3Endpoint {
  std::string base_url;  // "http://127.0.0.1:9000", no trailing '/'; empty: AWS
  std::string region;
  bool virtual_hosted = false;  // with an endpoint: the bucket goes in the host
  bool path_style = false;      // on AWS: the bucket goes in the path

  // Throws StorageError when the override is not an http(s) URL without query or fragment.
  static S3Endpoint resolve(std::string_view override_url, std::string region,
                            S3Addressing addressing = S3Addressing::Auto);

  bool is_aws() const { return base_url.empty(); }
  // The URL of a key ("" for the bucket itself); `canonical_query` as canonical_query() made it.
  std::string url(std::string_view bucket, std::string_view key,
                  std::string_view canonical_query = {}) const;
};

// RFC 3986 percent-encoding as SigV4 wants it: unreserved characters (A-Z a-z 0-9 - . _ ~) kept,
// every other byte as %XX in upper-case hex. Keys keep their '/' (they are path segments);
// query values do not.
std::string s3_uri_encode(std::string_view text, bool keep_slash);

// The query string SigV4 signs: each name and value encoded, pairs sorted by name then value.
// libcurl 7.88 signs the query exactly as written in the URL, so the URL must carry this form.
std::string canonical_query(std::vector<std::pair<std::string, std::string>> parameters);

}  // namespace rulestream
