// The credentials a job on AWS really has: web identity (EKS) and role_arn profiles against
// moto's STS, container agents (ECS, SageMaker) and IMDSv2 (EC2) served on 127.0.0.1, and a
// credential_process; in the AWS SDKs' order, and never a secret in a message.
#include "sources/s3/credential_chain.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "core/model/exceptions.hpp"
#include "sources/s3/s3_client.hpp"
#include "tests/support/credential_agents.hpp"
#include "tests/support/s3_test_server.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::bytes_of;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using namespace std::chrono_literals;
using Clock = std::chrono::system_clock;

const S3Credentials kAgentKeys{.access_key_id = "ASIAAGENTKEY0042",
                               .secret_access_key = "agent/secret+key=",
                               .session_token = "agent-session-token+/="};
const Clock::time_point kExpiration = Clock::from_time_t(2'000'000'000);  // 2033-05-18T03:33:20Z

// Nothing but what the test sets; no instance metadata unless the test points it somewhere.
class Variables {
 public:
  explicit Variables(const std::filesystem::path& home)
      : values_{{"HOME", home.string()}, {"AWS_EC2_METADATA_DISABLED", "true"}} {}
  Variables& set(const std::string& name, std::string value) {
    values_[name] = std::move(value);
    return *this;
  }
  Variables& unset(const std::string& name) {
    values_.erase(name);
    return *this;
  }
  EnvironmentLookup lookup() const {
    return [values = values_](std::string_view name) -> std::optional<std::string> {
      const auto it = values.find(std::string(name));
      if (it == values.end()) return std::nullopt;
      return it->second;
    };
  }

 private:
  std::map<std::string, std::string> values_;
};

std::string chain_error(const EnvironmentLookup& environment,
                        const CredentialChainOptions& options = {}) {
  return testing::storage_error_of([&] { resolve_s3_credentials(environment, options); });
}

void expect_no_secret(const std::string& text, const S3Credentials& credentials) {
  EXPECT_THAT(text, Not(HasSubstr(credentials.secret_access_key)));
  if (!credentials.session_token.empty()) {
    EXPECT_THAT(text, Not(HasSubstr(credentials.session_token)));
  }
}

class CredentialChainTest : public ::testing::Test {
 protected:
  void SetUp() override { std::filesystem::create_directories(home_.path() / ".aws"); }
  void write_aws_file(const std::string& name, const std::string& text) {
    testing::write_text_file(home_.path() / ".aws" / name, text);
  }
  Variables variables() const { return Variables(home_.path()); }

  testing::TempDir home_;
};

TEST_F(CredentialChainTest, AContainerAgentWithATokenFileServesTheTaskRole) {
  testing::ContainerAgent agent("/v2/credentials/task", "pod-identity-token-1");
  agent.serve(kAgentKeys, kExpiration);
  const auto token_file = home_.path() / "token";
  testing::write_text_file(token_file, "pod-identity-token-1\n");
  auto environment = variables()
                         .set("AWS_CONTAINER_CREDENTIALS_FULL_URI", agent.url())
                         .set("AWS_CONTAINER_AUTHORIZATION_TOKEN", "not-this-one")
                         .set("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", token_file.string());
  const auto credentials = resolve_s3_credentials(environment.lookup())->current();
  EXPECT_EQ(credentials->access_key_id, kAgentKeys.access_key_id);
  EXPECT_EQ(credentials->secret_access_key, kAgentKeys.secret_access_key);
  EXPECT_EQ(credentials->session_token, kAgentKeys.session_token);
  EXPECT_EQ(credentials->expiration, kExpiration);
  EXPECT_EQ(credentials->region, "us-east-1");
  EXPECT_EQ(credentials->source, "container credentials " + agent.url());
  EXPECT_EQ(agent.requests().at(0).headers.at("authorization"), "pod-identity-token-1");
  expect_no_secret(credentials->describe(), kAgentKeys);

  // The file is read at each fetch (EKS Pod Identity rotates it); a wrong token is refused.
  testing::write_text_file(token_file, "rotated-token-2");
  const std::string error = chain_error(environment.lookup());
  EXPECT_THAT(error, HasSubstr("container credentials " + agent.url()));
  EXPECT_THAT(error, HasSubstr("HTTP 401"));
  EXPECT_THAT(error, Not(HasSubstr("rotated-token-2")));
  expect_no_secret(error, kAgentKeys);
}

TEST_F(CredentialChainTest, AContainerAgentUnderTheRelativeUriWithTheTokenVariable) {
  testing::ContainerAgent agent("/v2/credentials/5f1c", "ecs-token");
  agent.serve(kAgentKeys, kExpiration);
  CredentialChainOptions options;
  options.container.relative_host = agent.base_url();
  auto environment = variables()
                         .set("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/5f1c")
                         .set("AWS_CONTAINER_AUTHORIZATION_TOKEN", "ecs-token");
  const auto credentials = resolve_s3_credentials(environment.lookup(), options)->current();
  EXPECT_EQ(credentials->access_key_id, kAgentKeys.access_key_id);
  EXPECT_EQ(credentials->source, "container credentials " + agent.url());
}

TEST_F(CredentialChainTest, AFullUriOverPlainHttpMustBeLoopbackOrTheAgent) {
  for (const std::string uri :
       {"http://10.0.0.7/creds", "http://127.0.0.1.example.com/creds", "ftp://127.0.0.1/creds"}) {
    auto environment = variables().set("AWS_CONTAINER_CREDENTIALS_FULL_URI", uri);
    const std::string error = chain_error(environment.lookup());
    EXPECT_THAT(error, HasSubstr("AWS_CONTAINER_CREDENTIALS_FULL_URI " + uri)) << uri;
    EXPECT_THAT(error, HasSubstr("only https, or http to a loopback address")) << uri;
  }
  // Loopback is allowed: these are asked (and nobody listens on port 1).
  for (const std::string uri :
       {"http://localhost:1/creds", "http://[::1]:1/creds", "http://127.0.0.2:1/creds"}) {
    auto environment = variables().set("AWS_CONTAINER_CREDENTIALS_FULL_URI", uri);
    EXPECT_THAT(chain_error(environment.lookup()),
                HasSubstr("container credentials " + uri + ": GET " + uri + ": "))
        << uri;
  }
}

TEST_F(CredentialChainTest, InstanceMetadataByImdsV2) {
  testing::InstanceMetadataService service("rulestream-node-role", kAgentKeys, kExpiration);
  auto environment = variables()
                         .unset("AWS_EC2_METADATA_DISABLED")
                         .set("AWS_EC2_METADATA_SERVICE_ENDPOINT", service.endpoint() + "/");
  const auto credentials = resolve_s3_credentials(environment.lookup())->current();
  EXPECT_EQ(credentials->access_key_id, kAgentKeys.access_key_id);
  EXPECT_EQ(credentials->session_token, kAgentKeys.session_token);
  EXPECT_EQ(credentials->expiration, kExpiration);
  EXPECT_EQ(credentials->source,
            "instance metadata " + service.endpoint() + ", role rulestream-node-role");
  expect_no_secret(credentials->describe(), kAgentKeys);
  EXPECT_THAT(credentials->describe(), Not(HasSubstr(testing::InstanceMetadataService::kToken)));
  const auto requests = service.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].method, "PUT");
  EXPECT_EQ(requests[0].headers.at("x-aws-ec2-metadata-token-ttl-seconds"), "21600");
  EXPECT_EQ(requests[1].target, "/latest/meta-data/iam/security-credentials/");
  EXPECT_EQ(requests[2].target, "/latest/meta-data/iam/security-credentials/rulestream-node-role");
  EXPECT_EQ(requests[2].headers.at("x-aws-ec2-metadata-token"),
            testing::InstanceMetadataService::kToken);
}

TEST_F(CredentialChainTest, NoInstanceMetadataIsPartOfTheNoCredentialsError) {
  testing::HttpReceiver nothing(testing::HttpAction::respond(404));
  auto environment = variables()
                         .unset("AWS_EC2_METADATA_DISABLED")
                         .set("AWS_EC2_METADATA_SERVICE_ENDPOINT", nothing.url(""));
  const std::string error = chain_error(environment.lookup());
  EXPECT_THAT(error, HasSubstr("no AWS credentials for S3"));
  EXPECT_THAT(error, HasSubstr("instance metadata " + nothing.url("") +
                               ": asked for a session token, it answered HTTP 404"));

  const std::string disabled = chain_error(variables().lookup());
  EXPECT_THAT(disabled, HasSubstr("AWS_EC2_METADATA_DISABLED is set"));
}

TEST_F(CredentialChainTest, TheSdkOrderEnvironmentProfileWebIdentityContainerInstance) {
  testing::ContainerAgent agent;
  agent.serve(kAgentKeys, kExpiration);
  testing::InstanceMetadataService service("role", kAgentKeys, kExpiration);
  write_aws_file("credentials",
                 "[default]\naws_access_key_id=AKIDPROFILE01\n"
                 "aws_secret_access_key=profile-secret\n");
  auto environment = variables()
                         .unset("AWS_EC2_METADATA_DISABLED")
                         .set("AWS_EC2_METADATA_SERVICE_ENDPOINT", service.endpoint())
                         .set("AWS_CONTAINER_CREDENTIALS_FULL_URI", agent.url())
                         .set("AWS_WEB_IDENTITY_TOKEN_FILE", (home_.path() / "none").string())
                         .set("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/r")
                         .set("AWS_ACCESS_KEY_ID", "AKIDENVIRONMENT")
                         .set("AWS_SECRET_ACCESS_KEY", "env-secret");
  EXPECT_EQ(load_s3_credentials(environment.lookup()).source, "environment");
  environment.unset("AWS_ACCESS_KEY_ID").unset("AWS_SECRET_ACCESS_KEY");
  EXPECT_EQ(load_s3_credentials(environment.lookup()).access_key_id, "AKIDPROFILE01");
  environment.set("AWS_PROFILE", "absent");
  // Web identity is next, and configured: its missing token file is an error, not a skip.
  EXPECT_THAT(chain_error(environment.lookup()), HasSubstr("cannot read the token file"));
  environment.unset("AWS_WEB_IDENTITY_TOKEN_FILE").unset("AWS_ROLE_ARN");
  EXPECT_EQ(load_s3_credentials(environment.lookup()).source,
            "container credentials " + agent.url());
  environment.unset("AWS_CONTAINER_CREDENTIALS_FULL_URI");
  EXPECT_THAT(load_s3_credentials(environment.lookup()).source, StartsWith("instance metadata"));
  EXPECT_EQ(agent.served(), 1u);
  EXPECT_EQ(service.requests().size(), 3u);  // asked only when nothing came before it
}

TEST_F(CredentialChainTest, HalfAWebIdentityIsAnError) {
  auto environment = variables().set("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/r");
  EXPECT_THAT(chain_error(environment.lookup()),
              HasSubstr("AWS_ROLE_ARN is set but AWS_WEB_IDENTITY_TOKEN_FILE is not"));
}

TEST_F(CredentialChainTest, ACredentialProcessPrintsVersionOneJson) {
  const auto script = home_.path() / "print-credentials.sh";
  testing::write_text_file(script,
                           "#!/bin/sh\n"
                           "echo \"asked for $1\" >&2\n"
                           "cat <<'JSON'\n"
                           "{\"Version\": 1, \"AccessKeyId\": \"ASIAPROCESS0007\",\n"
                           " \"SecretAccessKey\": \"process/secret\", \"SessionToken\": "
                           "\"process-token\",\n"
                           " \"Expiration\": \"2033-05-18T03:33:20Z\"}\n"
                           "JSON\n");
  write_aws_file("config", "[profile tool]\ncredential_process = sh '" + script.string() +
                               "' my-account\nregion = eu-north-1\n");
  auto environment = variables().set("AWS_PROFILE", "tool");
  const auto credentials = load_s3_credentials(environment.lookup());
  EXPECT_EQ(credentials.access_key_id, "ASIAPROCESS0007");
  EXPECT_EQ(credentials.secret_access_key, "process/secret");
  EXPECT_EQ(credentials.session_token, "process-token");
  EXPECT_EQ(credentials.expiration, kExpiration);
  EXPECT_EQ(credentials.region, "eu-north-1");
  EXPECT_EQ(credentials.source, "credential_process of config file " +
                                    (home_.path() / ".aws" / "config").string() +
                                    " [profile tool]");
}

TEST_F(CredentialChainTest, ACredentialProcessThatFailsOrPrintsTheWrongThingIsNamed) {
  const auto failing = home_.path() / "failing.sh";
  testing::write_text_file(failing,
                           "echo '{\"Version\": 1, \"AccessKeyId\": \"A\", \"SecretAccessKey\": "
                           "\"leaked-secret\"}'\nexit 3\n");
  const auto old_version = home_.path() / "old.sh";
  testing::write_text_file(old_version,
                           "echo '{\"Version\": 2, \"AccessKeyId\": \"A\", \"SecretAccessKey\": "
                           "\"leaked-secret\"}'\n");
  write_aws_file("config", "[profile failing]\ncredential_process = sh " + failing.string() +
                               "\n[profile old]\ncredential_process = sh " + old_version.string() +
                               "\n");
  const std::string failed = chain_error(variables().set("AWS_PROFILE", "failing").lookup());
  EXPECT_THAT(failed, HasSubstr("credential_process of config file"));
  EXPECT_THAT(failed, HasSubstr("[profile failing]: the command exited with status 3"));
  EXPECT_THAT(failed, Not(HasSubstr("leaked-secret")));
  const std::string old = chain_error(variables().set("AWS_PROFILE", "old").lookup());
  EXPECT_THAT(old, HasSubstr("[profile old]: the answer must say \"Version\": 1"));
  EXPECT_THAT(old, Not(HasSubstr("leaked-secret")));
}

TEST_F(CredentialChainTest, ARoleArnWithoutASourceOrWithALoopIsNamed) {
  write_aws_file(
      "config",
      "[profile lonely]\nrole_arn = arn:aws:iam::123456789012:role/r\n"
      "[profile a]\nrole_arn = arn:aws:iam::123456789012:role/a\nsource_profile = b\n"
      "[profile b]\nrole_arn = arn:aws:iam::123456789012:role/b\nsource_profile = a\n"
      "[profile c]\nrole_arn = arn:aws:iam::123456789012:role/c\nsource_profile = gone\n");
  EXPECT_THAT(chain_error(variables().set("AWS_PROFILE", "lonely").lookup()),
              HasSubstr("[profile lonely]: role_arn needs source_profile, credential_source or "
                        "web_identity_token_file"));
  EXPECT_THAT(chain_error(variables().set("AWS_PROFILE", "a").lookup()),
              HasSubstr("[profile b]: source_profile a loops back"));
  EXPECT_THAT(chain_error(variables().set("AWS_PROFILE", "c").lookup()),
              HasSubstr("profile [c] names source_profile gone, which is in neither"));
}

// Against moto's STS, which checks AssumeRole's signature and hands out credentials its S3
// then accepts.
class StsCredentialTest : public testing::S3ServerTest {
 protected:
  StsCredentialTest() : S3ServerTest("sts") {}
  void SetUp() override {
    S3ServerTest::SetUp();
    if (IsSkipped()) return;
    std::filesystem::create_directories(home_.path() / ".aws");
    role_arn_ = server_->create_role();
  }
  Variables variables() const {
    return Variables(home_.path()).set("AWS_ENDPOINT_URL_STS", server_->endpoint());
  }
  // S3 takes the credentials: a put and a get signed with them.
  void expect_s3_accepts(const std::shared_ptr<RefreshingCredentials>& credentials) {
    const S3Client client(S3Endpoint::resolve(server_->endpoint(), "us-east-1"), credentials);
    client.put(bucket_, "role.json", bytes_of("assumed"));
    EXPECT_EQ(std::string(client.get(bucket_, "role.json").as_string_view()), "assumed");
  }

  testing::TempDir home_;
  std::string role_arn_;
};

TEST_F(StsCredentialTest, AWebIdentityTokenFileAssumesTheRole) {
  const auto token_file = home_.path() / "eks-token";
  testing::write_text_file(token_file, "eyJhbGciOiJSUzI1NiJ9.web-identity-1.sig\n");
  auto environment = variables()
                         .set("AWS_WEB_IDENTITY_TOKEN_FILE", token_file.string())
                         .set("AWS_ROLE_ARN", role_arn_)
                         .set("AWS_ROLE_SESSION_NAME", "rulestream-test");
  const auto holder = resolve_s3_credentials(environment.lookup());
  const auto credentials = holder->current();
  EXPECT_THAT(credentials->access_key_id, StartsWith("ASIA"));
  EXPECT_FALSE(credentials->session_token.empty());
  ASSERT_TRUE(credentials->expiration.has_value());
  EXPECT_GT(*credentials->expiration, Clock::now() + 50min);
  EXPECT_EQ(credentials->source,
            "web identity (token file " + token_file.string() + ", role " + role_arn_ + ")");
  ASSERT_FALSE(server_->web_identity_tokens().empty());
  EXPECT_EQ(server_->web_identity_tokens().back(), "eyJhbGciOiJSUzI1NiJ9.web-identity-1.sig");
  expect_no_secret(credentials->describe(), *credentials);
  EXPECT_THAT(credentials->describe(), Not(HasSubstr("web-identity-1")));
  expect_s3_accepts(holder);

  // The kubelet rotates the token: the next fetch sends the new one.
  testing::write_text_file(token_file, "eyJhbGciOiJSUzI1NiJ9.web-identity-2.sig");
  ASSERT_TRUE(holder->renew_rejected(holder->current()));
  EXPECT_EQ(server_->web_identity_tokens().back(), "eyJhbGciOiJSUzI1NiJ9.web-identity-2.sig");
  EXPECT_NE(holder->current()->access_key_id, credentials->access_key_id);
  EXPECT_THAT(holder->current()->describe(), Not(HasSubstr("web-identity-2")));
}

TEST_F(StsCredentialTest, ARoleArnWithASourceProfileIsAssumedWithItsKeys) {
  testing::write_text_file(home_.path() / ".aws" / "config",
                           "[profile job]\nrole_arn = " + role_arn_ +
                               "\nsource_profile = base\nrole_session_name = nightly\n"
                               "duration_seconds = 1800\n");
  testing::write_text_file(
      home_.path() / ".aws" / "credentials",
      "[base]\naws_access_key_id = " + server_->credentials().access_key_id +
          "\naws_secret_access_key = " + server_->credentials().secret_access_key + "\n");
  auto environment = variables().set("AWS_PROFILE", "job");
  const auto holder = resolve_s3_credentials(environment.lookup());
  const auto credentials = holder->current();
  EXPECT_THAT(credentials->access_key_id, StartsWith("ASIA"));
  EXPECT_NE(credentials->access_key_id, server_->credentials().access_key_id);
  ASSERT_TRUE(credentials->expiration.has_value());
  EXPECT_LT(*credentials->expiration, Clock::now() + 31min);  // duration_seconds was passed on
  EXPECT_THAT(credentials->source, HasSubstr("role " + role_arn_ + " assumed with profile [base]"));
  EXPECT_THAT(credentials->source, HasSubstr("[profile job]"));
  expect_s3_accepts(holder);
}

TEST_F(StsCredentialTest, AProfileTakesItsRoleWithAWebIdentityOrTheEnvironmentsKeys) {
  const auto token_file = home_.path() / "token";
  testing::write_text_file(token_file, "profile-web-identity-token");
  testing::write_text_file(home_.path() / ".aws" / "config",
                           "[profile eks]\nrole_arn = " + role_arn_ +
                               "\nweb_identity_token_file = " + token_file.string() +
                               "\n[profile from-env]\nrole_arn = " + role_arn_ +
                               "\ncredential_source = Environment\n");
  const auto by_token = resolve_s3_credentials(variables().set("AWS_PROFILE", "eks").lookup());
  EXPECT_THAT(by_token->current()->source, StartsWith("web identity (token file "));
  EXPECT_EQ(server_->web_identity_tokens().back(), "profile-web-identity-token");
  expect_s3_accepts(by_token);

  // credential_source = Environment without keys in the environment (with them, the
  // environment comes first and the profile is not read, as in the SDKs).
  EXPECT_THAT(chain_error(variables().set("AWS_PROFILE", "from-env").lookup()),
              HasSubstr("credential_source Environment provides no credentials here"));
}

TEST_F(StsCredentialTest, AWrongSourceKeyIsRefusedByStsWithoutShowingIt) {
  testing::write_text_file(home_.path() / ".aws" / "config",
                           "[profile job]\nrole_arn = " + role_arn_ +
                               "\nsource_profile = base\n"
                               "[profile base]\naws_access_key_id = " +
                               server_->credentials().access_key_id +
                               "\naws_secret_access_key = wrong-secret-value\n");
  const std::string error = chain_error(variables().set("AWS_PROFILE", "job").lookup());
  EXPECT_THAT(error, HasSubstr("STS AssumeRole at " + server_->endpoint()));
  EXPECT_THAT(error, HasSubstr("SignatureDoesNotMatch"));
  EXPECT_THAT(error, HasSubstr("signed with access key ..."));
  EXPECT_THAT(error, Not(HasSubstr("wrong-secret-value")));
}

}  // namespace
}  // namespace rulestream
