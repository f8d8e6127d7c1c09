// The S3 client with credentials that change: renewed before they expire while requests go on,
// and renewed once when S3 answers that the session token has expired.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>

#include "core/model/exceptions.hpp"
#include "sources/s3/credential_chain.hpp"
#include "sources/s3/refreshing_credentials.hpp"
#include "sources/s3/s3_client.hpp"
#include "sources/s3/s3_storage.hpp"
#include "tests/support/credential_agents.hpp"
#include "tests/support/s3_test_server.hpp"

namespace rulestream {
namespace {

using testing::bytes_of;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::storage_error_of;
using namespace std::chrono_literals;
using Clock = std::chrono::system_clock;

// The test server's own keys, handed out as if they were temporary, counting the fetches.
class CountingKeys final : public CredentialProvider {
 public:
  CountingKeys(S3Credentials keys, std::atomic<int>& fetches)
      : keys_(std::move(keys)), fetches_(fetches) {}
  S3Credentials fetch() override {
    ++fetches_;
    S3Credentials credentials = keys_;
    credentials.source = "counting provider";
    credentials.expiration = Clock::now() + 1h;
    return credentials;
  }

 private:
  S3Credentials keys_;
  std::atomic<int>& fetches_;
};

class S3ClientCredentialsTest : public testing::S3ServerTest {
 protected:
  S3ClientCredentialsTest() : S3ServerTest("credentials") {}

  S3Client client_with(std::shared_ptr<const RefreshingCredentials> credentials) const {
    return S3Client(S3Endpoint::resolve(server_->endpoint(), "us-east-1"), std::move(credentials));
  }
  std::shared_ptr<const RefreshingCredentials> counting() {
    return std::make_shared<const RefreshingCredentials>(
        std::make_unique<CountingKeys>(server_->credentials(), fetches_), "us-east-1");
  }

  std::atomic<int> fetches_{0};
};

TEST_F(S3ClientCredentialsTest, AnExpiredTokenIsRenewedAndTheRequestSentOnceMore) {
  const S3Client client = client_with(counting());
  client.put(bucket_, "a.json", bytes_of("renewed"));
  ASSERT_EQ(fetches_, 1);
  server_->fail_next_requests(bucket_, 1, 403, "ExpiredToken");
  EXPECT_EQ(std::string(client.get(bucket_, "a.json").as_string_view()), "renewed");
  EXPECT_EQ(server_->failures_served(bucket_), 1);
  EXPECT_EQ(fetches_, 2);
  EXPECT_EQ(client.counts().retries, 1u);
}

TEST_F(S3ClientCredentialsTest, AnExpiredTokenIsRenewedOnlyOnce) {
  const S3Client client = client_with(counting());
  server_->fail_next_requests(bucket_, 2, 400, "ExpiredToken");
  const std::string error = storage_error_of([&] { client.list(bucket_, "x/"); });
  EXPECT_THAT(error, HasSubstr("S3 refused the session token (HTTP 400 ExpiredToken"));
  EXPECT_THAT(error, HasSubstr("again after the credentials were renewed"));
  EXPECT_THAT(error, Not(HasSubstr(server_->credentials().secret_access_key)));
  EXPECT_EQ(server_->failures_served(bucket_), 2);
  EXPECT_EQ(fetches_, 2);
}

TEST_F(S3ClientCredentialsTest, FixedCredentialsAreNotSentAgainAfterAnExpiredToken) {
  server_->fail_next_requests(bucket_, 1, 403, "ExpiredToken");
  const std::string error = storage_error_of([&] { client_->list(bucket_, "x/"); });
  EXPECT_THAT(error, HasSubstr("HTTP 403 ExpiredToken"));
  EXPECT_THAT(error, Not(HasSubstr("renewed")));
  EXPECT_EQ(server_->failures_served(bucket_), 1);
  EXPECT_EQ(client_->counts().retries, 0u);
}

TEST_F(S3ClientCredentialsTest, ParallelRangesRenewTheCredentialsOnce) {
  const S3Client client = client_with(counting());
  client.put(bucket_, "r.bin", bytes_of("0123456789"));
  server_->fail_next_requests(bucket_, 3, 403, "ExpiredTokenException");
  const S3ByteRange ranges[] = {{0, 2}, {2, 2}, {4, 2}};
  const auto parts = client.get_ranges(bucket_, "r.bin", ranges);
  EXPECT_EQ(std::string(parts[2].as_string_view()), "45");
  EXPECT_EQ(fetches_, 2);
}

// A long watch beside an ECS task: the agent's credentials are renewed before they expire, and
// the requests after that are signed with the new ones, which S3 accepts.
TEST_F(S3ClientCredentialsTest, CredentialsFromAnAgentAreRenewedBeforeTheyExpire) {
  const S3Credentials first = server_->temporary_credentials();
  const S3Credentials second = server_->temporary_credentials();
  ASSERT_NE(first.access_key_id, second.access_key_id);
  const Clock::time_point start = Clock::from_time_t(1'900'000'000);
  std::atomic<Clock::rep> now{start.time_since_epoch().count()};
  testing::ContainerAgent agent("/v2/credentials/task", "agent-secret-token");
  agent.serve(first, start + 1h);
  agent.serve(second, start + 2h);

  CredentialChainOptions options;
  options.refresh.clock = [&] { return Clock::time_point(Clock::duration(now.load())); };
  const auto credentials = resolve_s3_credentials(
      [&](std::string_view name) -> std::optional<std::string> {
        if (name == "AWS_CONTAINER_CREDENTIALS_FULL_URI") return agent.url();
        if (name == "AWS_CONTAINER_AUTHORIZATION_TOKEN") return "agent-secret-token";
        if (name == "HOME") return "/nonexistent";
        return std::nullopt;
      },
      options);
  const S3Client client = client_with(credentials);
  client.put(bucket_, "w.json", bytes_of("watch"));
  EXPECT_EQ(client.credentials()->access_key_id, first.access_key_id);
  now = (start + 1h - 4min).time_since_epoch().count();  // inside the five minutes before
  EXPECT_EQ(std::string(client.get(bucket_, "w.json").as_string_view()), "watch");
  EXPECT_EQ(agent.served(), 2u);
  EXPECT_EQ(client.credentials()->access_key_id, second.access_key_id);
  EXPECT_EQ(client.counts().retries, 0u);
  EXPECT_THAT(client.credentials()->describe(), HasSubstr("container credentials " + agent.url()));
}

// S3Storage::open takes the chain's credentials: an ECS task's, here.
TEST_F(S3ClientCredentialsTest, StorageOpensWithTheCredentialsOfAContainerAgent) {
  client_->put(bucket_, "job/index/a.json", bytes_of("{}"));
  testing::ContainerAgent agent;
  agent.serve(server_->temporary_credentials(), Clock::now() + 1h);
  const std::string endpoint = server_->endpoint();
  const auto storage = S3Storage::open("s3://" + bucket_ + "/job", {},
                                       [&](std::string_view name) -> std::optional<std::string> {
                                         if (name == "AWS_CONTAINER_CREDENTIALS_FULL_URI")
                                           return agent.url();
                                         if (name == "AWS_ENDPOINT_URL") return endpoint;
                                         if (name == "HOME") return "/nonexistent";
                                         return std::nullopt;
                                       });
  ASSERT_EQ(storage->list("index/").size(), 1u);
  EXPECT_EQ(agent.served(), 1u);
  EXPECT_THAT(storage->client().credentials()->source, HasSubstr("container credentials"));
}

}  // namespace
}  // namespace rulestream
