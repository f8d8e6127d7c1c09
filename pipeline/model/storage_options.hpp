#pragma once

#include <chrono>
#include <string>

namespace rulestream {

// How to reach storage that is not a local folder. Empty / zero fields take the defaults
// (S3ClientOptions) and the environment (AWS_ENDPOINT_URL).
struct StorageOptions {
  std::string s3_endpoint;  // an S3-compatible store, path-style; empty: AWS_ENDPOINT_URL or AWS
  std::chrono::milliseconds s3_timeout{0};  // per request; 0: the client's default
  int s3_attempts = 0;                      // tries per request; 0: the client's default
};

}  // namespace rulestream
