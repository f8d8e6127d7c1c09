#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace rulestream {

// How S3 requests name the bucket: in the host (virtual-hosted style,
// https://BUCKET.s3.REGION.amazonaws.com/KEY) or in the path (BASE/BUCKET/KEY). Auto: virtual
// for AWS (path for a bucket name with dots, which the certificate would not match), path for
// an endpoint override (what S3-compatible stores answer by default).
enum class S3Addressing { Auto, Path, Virtual };

// How to reach storage that is not a local folder. Empty / zero fields take the defaults
// (S3ClientOptions) and the environment (AWS_ENDPOINT_URL).
struct StorageOptions {
  std::string s3_endpoint;  // an S3-compatible store; empty: AWS_ENDPOINT_URL or AWS
  S3Addressing s3_addressing = S3Addressing::Auto;
  std::chrono::milliseconds s3_timeout{0};  // per request; 0: the client's default
  int s3_attempts = 0;                      // tries per request; 0: the client's default
  // How many whole-file mappings of event files a local folder keeps for later reads; 0: the
  // default (16), enough for a pipeline's rules, which read a few steps at a time. A notebook
  // that reads tensor by tensor visits every event file in turn and wants them all kept (the
  // Python module asks for 1,024). Each kept mapping holds a descriptor and a read lease, and
  // the process holds at most RLIMIT_NOFILE / 4 leases: beyond that, reads copy.
  std::size_t local_kept_mappings = 0;
};

}  // namespace rulestream
