#include "sources/s3/sts_client.hpp"

#include <pugixml.hpp>
#include <utility>
#include <vector>

#include "core/model/exceptions.hpp"
#include "sources/s3/credential_http.hpp"
#include "sources/s3/credentials_json.hpp"
#include "sources/s3/s3_location.hpp"

namespace rulestream {
namespace {

std::string session_name_of(const AssumeRoleRequest& request) {
  if (!request.session_name.empty()) return request.session_name;
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
      std::chrono::system_clock::now().time_since_epoch());
  return "rulestream-" + std::to_string(seconds.count());
}

std::string form_body(std::vector<std::pair<std::string, std::string>> fields) {
  // The canonical query encoding is also a valid form encoding (RFC 3986 percent-encoding).
  return canonical_query(std::move(fields));
}

// The Credentials of an AssumeRole*Response, or the Error of an ErrorResponse, thrown.
S3Credentials credentials_from(const CredentialHttpResponse& response, const std::string& action,
                               const StsEndpoint& endpoint, const std::string& source) {
  pugi::xml_document document;
  const bool parsed = document.load_buffer(response.body.data(), response.body.size(),
                                           pugi::parse_default, pugi::encoding_utf8);
  const std::string where = source + ": STS " + action + " at " + endpoint.url;
  if (response.status != 200) {
    const pugi::xml_node error = document.select_node("//Error").node();
    const std::string code = error.child_value("Code");
    const std::string message = error.child_value("Message");
    throw StorageError(where + " answered HTTP " + std::to_string(response.status) +
                       (code.empty() ? "" : " " + code) + (message.empty() ? "" : ": " + message));
  }
  const pugi::xml_node credentials = document.select_node("//Credentials").node();
  S3Credentials found;
  found.access_key_id = credentials.child_value("AccessKeyId");
  found.secret_access_key = credentials.child_value("SecretAccessKey");
  found.session_token = credentials.child_value("SessionToken");
  if (!parsed || found.access_key_id.empty() || found.secret_access_key.empty() ||
      found.session_token.empty()) {
    throw StorageError(where + ": the answer holds no credentials");
  }
  found.expiration = parse_expiration(credentials.child_value("Expiration"), where);
  found.source = source;
  return found;
}

std::vector<std::pair<std::string, std::string>> common_fields(const std::string& action,
                                                               const AssumeRoleRequest& request) {
  std::vector<std::pair<std::string, std::string>> fields = {
      {"Action", action},
      {"Version", "2011-06-15"},
      {"RoleArn", request.role_arn},
      {"RoleSessionName", session_name_of(request)}};
  if (request.duration_seconds) {
    fields.emplace_back("DurationSeconds", std::to_string(*request.duration_seconds));
  }
  return fields;
}

CredentialHttpRequest post(const StsEndpoint& endpoint, const AssumeRoleRequest& request,
                           std::vector<std::pair<std::string, std::string>> fields) {
  CredentialHttpRequest http;
  http.method = "POST";
  http.url = endpoint.url + "/";
  http.body = form_body(std::move(fields));
  http.headers = {"Content-Type: application/x-www-form-urlencoded; charset=utf-8"};
  http.timeout = request.timeout;
  return http;
}

}  // namespace

StsEndpoint StsEndpoint::resolve(const EnvironmentLookup& environment, const std::string& region) {
  std::string url = non_empty_variable(environment, "AWS_ENDPOINT_URL_STS")
                        .value_or(non_empty_variable(environment, "AWS_ENDPOINT_URL")
                                      .value_or("https://sts." + region + ".amazonaws.com"));
  while (url.ends_with('/')) url.pop_back();
  return {std::move(url), region};
}

S3Credentials assume_role_with_web_identity(const StsEndpoint& endpoint,
                                            const AssumeRoleRequest& request,
                                            const std::string& web_identity_token,
                                            const std::string& source) {
  const std::string action = "AssumeRoleWithWebIdentity";
  auto fields = common_fields(action, request);
  fields.emplace_back("WebIdentityToken", web_identity_token);
  const CredentialHttpRequest http = post(endpoint, request, std::move(fields));
  return credentials_from(send_credential_request(http, source), action, endpoint, source);
}

S3Credentials assume_role(const StsEndpoint& endpoint, const AssumeRoleRequest& request,
                          const S3Credentials& caller, const std::string& source) {
  const std::string action = "AssumeRole";
  auto fields = common_fields(action, request);
  if (!request.external_id.empty()) fields.emplace_back("ExternalId", request.external_id);
  CredentialHttpRequest http = post(endpoint, request, std::move(fields));
  http.sign_as = &caller;
  http.sign_region = endpoint.region;
  try {
    return credentials_from(send_credential_request(http, source), action, endpoint, source);
  } catch (const StorageError& error) {
    throw StorageError(std::string(error.what()) + " (signed with " + caller.describe() + ")");
  }
}

}  // namespace rulestream
