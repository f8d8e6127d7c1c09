#include "tests/support/credential_agents.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

#include "core/model/utc_time.hpp"

namespace rulestream::testing {

std::string agent_credentials_json(const S3Credentials& credentials,
                                   std::chrono::system_clock::time_point expiration) {
  return boost::json::serialize(
      boost::json::object{{"Code", "Success"},
                          {"Type", "AWS-HMAC"},
                          {"AccessKeyId", credentials.access_key_id},
                          {"SecretAccessKey", credentials.secret_access_key},
                          {"Token", credentials.session_token},
                          {"Expiration", iso8601_utc_seconds(expiration)}});
}

struct ContainerAgent::Served {
  std::mutex mutex;
  std::vector<std::string> documents;
  std::size_t count = 0;
};

ContainerAgent::ContainerAgent(std::string path, std::string token)
    : path_(std::move(path)), token_(std::move(token)), served_(std::make_shared<Served>()) {
  receiver_.answer_with([path = path_, token = token_,
                         served = served_](const ReceivedRequest& request) {
    if (request.method != "GET" || request.target != path) return HttpAction::respond(404);
    const auto authorization = request.headers.find("authorization");
    const bool authorised =
        token.empty() ? authorization == request.headers.end()
                      : authorization != request.headers.end() && authorization->second == token;
    if (!authorised) {
      return HttpAction::respond(401).with_body(R"({"code":"AccessDenied"})");
    }
    const std::lock_guard lock(served->mutex);
    if (served->documents.empty()) return HttpAction::respond(500);
    const std::size_t index = std::min(served->count, served->documents.size() - 1);
    ++served->count;
    return HttpAction::respond(200).with_body(served->documents[index]);
  });
}

void ContainerAgent::serve(const S3Credentials& credentials,
                           std::chrono::system_clock::time_point expiration) {
  const std::lock_guard lock(served_->mutex);
  served_->documents.push_back(agent_credentials_json(credentials, expiration));
}

std::size_t ContainerAgent::served() const {
  const std::lock_guard lock(served_->mutex);
  return served_->count;
}

InstanceMetadataService::InstanceMetadataService(std::string role, const S3Credentials& credentials,
                                                 std::chrono::system_clock::time_point expiration) {
  const std::string document = agent_credentials_json(credentials, expiration);
  receiver_.answer_with([role, document](const ReceivedRequest& request) {
    const std::string credentials_path = "/latest/meta-data/iam/security-credentials/";
    if (request.method == "PUT" && request.target == "/latest/api/token") {
      if (!request.headers.contains("x-aws-ec2-metadata-token-ttl-seconds")) {
        return HttpAction::respond(400);
      }
      return HttpAction::respond(200).with_body(std::string(kToken));
    }
    const auto token = request.headers.find("x-aws-ec2-metadata-token");
    if (token == request.headers.end() || token->second != kToken) return HttpAction::respond(401);
    if (request.method == "GET" && request.target == credentials_path) {
      return HttpAction::respond(200).with_body(role + "\n");
    }
    if (request.method == "GET" && request.target == credentials_path + role) {
      return HttpAction::respond(200).with_body(document);
    }
    return HttpAction::respond(404);
  });
}

}  // namespace rulestream::testing
