#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "core/model/exceptions.hpp"
#include "sources/s3/credential_chain.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

EnvironmentLookup fake_environment(std::map<std::string, std::string> variables) {
  return [variables](std::string_view name) -> std::optional<std::string> {
    const auto it = variables.find(std::string(name));
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
}

class S3CredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::filesystem::create_directories(home_.path() / ".aws");
    testing::write_text_file(home_.path() / ".aws" / "credentials",
                             "# a comment\n"
                             "[default]\n"
                             "aws_access_key_id = AKIDDEFAULT0001\n"
                             "aws_secret_access_key = default/secret+key=\n"
                             "\n"
                             "[dev]\n"
                             "aws_access_key_id=AKIDDEV00000002\n"
                             "aws_secret_access_key=dev-secret\n"
                             "aws_session_token = dev+token/with=odd chars\n");
    testing::write_text_file(home_.path() / ".aws" / "config",
                             "[default]\n"
                             "region = eu-west-1\n"
                             "[profile dev]\n"
                             "region = ap-south-1\n"
                             "s3 =\n"
                             "    addressing_style = path\n"
                             "[profile only-config]\n"
                             "aws_access_key_id = AKIDCONFIG00003\n"
                             "aws_secret_access_key = config-secret\n");
  }
  std::map<std::string, std::string> base() const {
    return {{"HOME", home_.path().string()}, {"AWS_EC2_METADATA_DISABLED", "true"}};
  }

  testing::TempDir home_;
};

TEST_F(S3CredentialsTest, EnvironmentComesFirst) {
  auto variables = base();
  variables["AWS_ACCESS_KEY_ID"] = "AKIDENVIRONMENT9";
  variables["AWS_SECRET_ACCESS_KEY"] = "env-secret";
  variables["AWS_SESSION_TOKEN"] = "env-token";
  variables["AWS_REGION"] = "us-west-2";
  variables["AWS_DEFAULT_REGION"] = "ca-central-1";
  const auto credentials = load_s3_credentials(fake_environment(variables));
  EXPECT_EQ(credentials.access_key_id, "AKIDENVIRONMENT9");
  EXPECT_EQ(credentials.secret_access_key, "env-secret");
  EXPECT_EQ(credentials.session_token, "env-token");
  EXPECT_EQ(credentials.region, "us-west-2");
  EXPECT_EQ(credentials.source, "environment");
}

TEST_F(S3CredentialsTest, SharedFileDefaultProfileWithRegionFromConfig) {
  const auto credentials = load_s3_credentials(fake_environment(base()));
  EXPECT_EQ(credentials.access_key_id, "AKIDDEFAULT0001");
  EXPECT_EQ(credentials.secret_access_key, "default/secret+key=");
  EXPECT_EQ(credentials.session_token, "");
  EXPECT_EQ(credentials.region, "eu-west-1");
  EXPECT_THAT(credentials.source, HasSubstr("[default]"));
}

TEST_F(S3CredentialsTest, ProfileFromAwsProfileWithItsTokenAndConfigSection) {
  auto variables = base();
  variables["AWS_PROFILE"] = "dev";
  const auto credentials = load_s3_credentials(fake_environment(variables));
  EXPECT_EQ(credentials.access_key_id, "AKIDDEV00000002");
  EXPECT_EQ(credentials.session_token, "dev+token/with=odd chars");
  EXPECT_EQ(credentials.region, "ap-south-1");
  variables["AWS_DEFAULT_REGION"] = "ca-central-1";
  EXPECT_EQ(load_s3_credentials(fake_environment(variables)).region, "ca-central-1");
}

TEST_F(S3CredentialsTest, KeysInTheConfigFileAndFileOverrides) {
  auto variables = base();
  variables["AWS_PROFILE"] = "only-config";
  const auto from_config = load_s3_credentials(fake_environment(variables));
  EXPECT_EQ(from_config.access_key_id, "AKIDCONFIG00003");
  EXPECT_EQ(from_config.region, "us-east-1");  // no region anywhere: the default

  testing::write_text_file(home_.path() / "other-credentials",
                           "[default]\naws_access_key_id=AKIDOTHER000004\n"
                           "aws_secret_access_key=other\n");
  variables = base();
  variables["AWS_SHARED_CREDENTIALS_FILE"] = (home_.path() / "other-credentials").string();
  variables["AWS_CONFIG_FILE"] = (home_.path() / "missing-config").string();
  const auto overridden = load_s3_credentials(fake_environment(variables));
  EXPECT_EQ(overridden.access_key_id, "AKIDOTHER000004");
  EXPECT_EQ(overridden.region, "us-east-1");
}

TEST_F(S3CredentialsTest, MissingOrHalfSetCredentialsAreClearErrors) {
  auto variables = base();
  variables["AWS_PROFILE"] = "nobody";
  try {
    load_s3_credentials(fake_environment(variables));
    ADD_FAILURE() << "no error";
  } catch (const StorageError& error) {
    EXPECT_THAT(error.what(), HasSubstr("no AWS credentials"));
    EXPECT_THAT(error.what(), HasSubstr("[nobody]"));
  }
  variables = base();
  variables["AWS_ACCESS_KEY_ID"] = "AKIDHALF";
  try {
    load_s3_credentials(fake_environment(variables));
    ADD_FAILURE() << "no error";
  } catch (const StorageError& error) {
    EXPECT_THAT(error.what(), HasSubstr("AWS_SECRET_ACCESS_KEY is not"));
  }
}

TEST_F(S3CredentialsTest, DescribeNeverShowsTheSecretOrTheToken) {
  auto variables = base();
  variables["AWS_PROFILE"] = "dev";
  const auto credentials = load_s3_credentials(fake_environment(variables));
  const std::string shown = credentials.describe();
  EXPECT_THAT(shown, HasSubstr("...0002"));
  EXPECT_THAT(shown, HasSubstr("session token"));
  EXPECT_THAT(shown, HasSubstr("ap-south-1"));
  EXPECT_THAT(shown, Not(HasSubstr("AKIDDEV")));
  EXPECT_THAT(shown, Not(HasSubstr("dev-secret")));
  EXPECT_THAT(shown, Not(HasSubstr("dev+token")));
}

}  // namespace
}  // namespace rulestream
