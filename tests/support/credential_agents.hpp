#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sources/s3/s3_credentials.hpp"
#include "tests/support/http_receiver.hpp"

namespace rulestream::testing {

// Credentials as a container agent or the instance metadata service serves them.
std::string agent_credentials_json(const S3Credentials& credentials,
                                   std::chrono::system_clock::time_point expiration);

// A container credentials agent (ECS, SageMaker, EKS Pod Identity) on 127.0.0.1: GET `path`
// with the right Authorization header gets the next credentials served (the last one again
// once they run out); a wrong or missing header gets 401, another path 404.
class ContainerAgent {
 public:
  explicit ContainerAgent(std::string path = "/v2/credentials/task", std::string token = {});

  // Appends credentials to serve, each with its expiration.
  void serve(const S3Credentials& credentials, std::chrono::system_clock::time_point expiration);
  std::string base_url() const { return receiver_.url(""); }
  std::string url() const { return receiver_.url(path_); }
  std::size_t served() const;  // answers with credentials
  std::vector<ReceivedRequest> requests() const { return receiver_.requests(); }

 private:
  struct Served;
  std::string path_;
  std::string token_;
  std::shared_ptr<Served> served_;
  HttpReceiver receiver_;
};

// The EC2 instance metadata service's IMDSv2 on 127.0.0.1: PUT /latest/api/token (with a TTL
// header) gets a session token; the role name and its credentials are served only to requests
// that carry it (401 otherwise), the role's credentials in the JSON the service writes.
class InstanceMetadataService {
 public:
  InstanceMetadataService(std::string role, const S3Credentials& credentials,
                          std::chrono::system_clock::time_point expiration);

  std::string endpoint() const { return receiver_.url(""); }
  static constexpr std::string_view kToken = "imds-session-token-7f3a";
  std::vector<ReceivedRequest> requests() const { return receiver_.requests(); }

 private:
  HttpReceiver receiver_;
};

}  // namespace rulestream::testing
