// The S3 client against a real S3-compatible server (moto, signatures checked): signing, odd
// keys, continuation, ranges, and the errors a user meets.
#include "sources/s3/s3_client.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "core/model/exceptions.hpp"
#include "tests/support/s3_test_server.hpp"
#include "tests/support/tcp_proxy.hpp"

namespace rulestream {
namespace {

using testing::bytes_of;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::storage_error_of;

std::string text_of(const SharedBytes& bytes) {
  return std::string(bytes.as_string_view());
}

std::vector<std::string> keys_of(const std::vector<S3ObjectInfo>& objects) {
  std::vector<std::string> keys;
  for (const auto& object : objects) keys.push_back(object.key);
  return keys;
}

class S3ClientTest : public testing::S3ServerTest {
 protected:
  S3ClientTest() : S3ServerTest("client") {}
};

TEST_F(S3ClientTest, SignedRequestsRoundTrip) {
  client_->put(bucket_, "job/index/a.json", bytes_of("{\"a\": 1}"));
  EXPECT_EQ(text_of(client_->get(bucket_, "job/index/a.json")), "{\"a\": 1}");
  const auto objects = client_->list(bucket_, "job/");
  ASSERT_EQ(objects.size(), 1u);
  EXPECT_EQ(objects[0].key, "job/index/a.json");
  EXPECT_EQ(objects[0].size, 8u);
  EXPECT_GT(objects[0].modified_ns, 0);
  const auto head = client_->head(bucket_, "job/index/a.json");
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->size, 8u);
  EXPECT_FALSE(client_->head(bucket_, "job/index/missing.json").has_value());
}

TEST_F(S3ClientTest, AWrongSecretIsAClear403NamingBucketAndKeyButNotTheSecret) {
  S3Credentials wrong = server_->credentials();
  wrong.secret_access_key = "not-the-secret+/=";
  const S3Client impostor(S3Endpoint::resolve(server_->endpoint(), wrong.region), wrong);
  client_->put(bucket_, "k.json", bytes_of("x"));
  const std::string error = storage_error_of([&] { impostor.get(bucket_, "k.json"); });
  EXPECT_THAT(error, HasSubstr("s3://" + bucket_ + "/k.json"));
  EXPECT_THAT(error, HasSubstr("access denied"));
  EXPECT_THAT(error, HasSubstr("403 SignatureDoesNotMatch"));
  const std::string& id = wrong.access_key_id;
  EXPECT_THAT(error, HasSubstr("..." + id.substr(id.size() - 4)));
  EXPECT_THAT(error, Not(HasSubstr(id)));
  EXPECT_THAT(error, Not(HasSubstr("not-the-secret")));
  EXPECT_THAT(storage_error_of([&] { impostor.list(bucket_, "x/"); }), HasSubstr("access denied"));
  // Not retried: it cannot pass; and typed so, for a caller that retries what may pass.
  EXPECT_EQ(impostor.counts().retries, 0u);
  EXPECT_THROW(impostor.get(bucket_, "k.json"), StorageAccessDenied);
}

TEST_F(S3ClientTest, TemporaryCredentialsSendTheirSessionToken) {
  const S3Credentials temporary = server_->temporary_credentials();
  const auto endpoint = S3Endpoint::resolve(server_->endpoint(), temporary.region);
  const S3Client with_token(endpoint, temporary);
  with_token.put(bucket_, "t.json", bytes_of("token"));
  EXPECT_EQ(text_of(with_token.get(bucket_, "t.json")), "token");

  S3Credentials without = temporary;
  without.session_token.clear();
  const std::string missing =
      storage_error_of([&] { S3Client(endpoint, without).get(bucket_, "t.json"); });
  EXPECT_THAT(missing, HasSubstr("access denied"));
  S3Credentials wrong = temporary;
  wrong.session_token = "not+the/token=";
  const std::string bad =
      storage_error_of([&] { S3Client(endpoint, wrong).get(bucket_, "t.json"); });
  EXPECT_THAT(bad, HasSubstr("S3 refused the session token (HTTP 400 InvalidToken"));
  EXPECT_THAT(bad, HasSubstr("with a session token"));
  EXPECT_THAT(bad, Not(HasSubstr("not+the/token=")));
  EXPECT_THAT(bad, Not(HasSubstr(temporary.secret_access_key)));
}

TEST_F(S3ClientTest, ASessionTokenWithPlusSlashAndEqualsIsSentAsItIs) {
  // STS tokens are base64: '+', '/' and '=' in a header value that is signed. moto's are 356
  // characters of base64 ending in '=', so nearly every one has all three; ask again if not.
  S3Credentials temporary;
  for (int attempt = 0; attempt < 20; ++attempt) {
    temporary = server_->temporary_credentials();
    const std::string& token = temporary.session_token;
    if (token.find('+') != std::string::npos && token.find('/') != std::string::npos &&
        token.find('=') != std::string::npos) {
      break;
    }
  }
  ASSERT_THAT(temporary.session_token, HasSubstr("+"));
  ASSERT_THAT(temporary.session_token, HasSubstr("/"));
  ASSERT_THAT(temporary.session_token, HasSubstr("="));
  const S3Client with_token(S3Endpoint::resolve(server_->endpoint(), temporary.region), temporary);
  // A key and a listing query that need encoding too, signed together with the token.
  const std::string key = "tok en/a+b=c/\xC3\xA9.json";
  with_token.put(bucket_, key, bytes_of("token"));
  EXPECT_EQ(text_of(with_token.get(bucket_, key)), "token");
  EXPECT_EQ(text_of(with_token.get_range(bucket_, key, {1, 3})), "oke");
  EXPECT_THAT(keys_of(with_token.list(bucket_, "tok en/a+b=c/", "tok en/a+b=c/+")),
              ElementsAre(key));
  EXPECT_TRUE(with_token.head(bucket_, key).has_value());
  // The token is checked, not ignored: the same token with one character changed is refused.
  S3Credentials altered = temporary;
  altered.session_token.back() = altered.session_token.back() == 'A' ? 'B' : 'A';
  EXPECT_THAT(storage_error_of([&] {
                S3Client(S3Endpoint::resolve(server_->endpoint(), altered.region), altered)
                    .get(bucket_, key);
              }),
              HasSubstr("S3 refused the session token"));
}

TEST_F(S3ClientTest, KeysAndPrefixesWithOddCharacters) {
  const std::vector<std::string> keys = {"run 1/a+b=c/x.json", "run 1/a+b=c/\xC3\xA9t\xC3\xA9.json",
                                         "run 1/a+b=c/y~z_(1)*!.json", "run 1/b/x.json"};
  for (const auto& key : keys) client_->put(bucket_, key, bytes_of(key));
  for (const auto& key : keys) EXPECT_EQ(text_of(client_->get(bucket_, key)), key);
  EXPECT_THAT(keys_of(client_->list(bucket_, "run 1/a+b=c/")),
              ElementsAre("run 1/a+b=c/x.json", "run 1/a+b=c/y~z_(1)*!.json",
                          "run 1/a+b=c/\xC3\xA9t\xC3\xA9.json"));
  EXPECT_THAT(keys_of(client_->list(bucket_, "run 1/", "run 1/a+b=c/y~z_(1)*!.json")),
              ElementsAre("run 1/a+b=c/\xC3\xA9t\xC3\xA9.json", "run 1/b/x.json"));
  EXPECT_THAT(keys_of(client_->list(bucket_, "run 1/a+b=c/\xC3\xA9")),
              ElementsAre("run 1/a+b=c/\xC3\xA9t\xC3\xA9.json"));
}

TEST_F(S3ClientTest, ListingsOfMoreThanAThousandKeysFollowContinuations) {
  std::vector<std::string> expected;
  for (int i = 0; i < 1003; ++i) {
    char key[64];
    std::snprintf(key, sizeof key, "many/index/%06d_worker_0.json", i);
    expected.push_back(key);
  }
  {
    std::vector<std::thread> uploaders;
    for (int first = 0; first < 4; ++first) {
      uploaders.emplace_back([&, first] {
        for (std::size_t i = static_cast<std::size_t>(first); i < expected.size(); i += 4) {
          client_->put(bucket_, expected[i], bytes_of("{}"));
        }
      });
    }
    for (auto& uploader : uploaders) uploader.join();
  }
  const auto before = client_->counts().lists;
  EXPECT_EQ(keys_of(client_->list(bucket_, "many/")), expected);
  EXPECT_EQ(client_->counts().lists - before, 2u);
  // start-after skips without listing what precedes it.
  const auto tail = client_->list(bucket_, "many/", expected[1000]);
  EXPECT_THAT(keys_of(tail), ElementsAre(expected[1001], expected[1002]));
  const auto page = client_->list_page(bucket_, "many/", {}, {}, 10);
  EXPECT_EQ(page.objects.size(), 10u);
  EXPECT_TRUE(page.truncated);
  const auto next = client_->list_page(bucket_, "many/", {}, page.next_continuation_token, 10);
  EXPECT_EQ(next.objects.front().key, expected[10]);
}

// A root's jobs (serve --jobs s3://...): the sub-prefixes one level down, each once however many
// objects it holds, in key order, pages followed; objects at the top and deeper levels are not
// prefixes of their own, nor is a prefix that merely starts like the root ("jobsarchive/").
TEST_F(S3ClientTest, SubPrefixesAreListedOneLevelDownAcrossPages) {
  for (const char* key : {"jobs/a/index/1.json", "jobs/a/index/2.json", "jobs/b/events/x",
                          "jobs/c d+e/collections/c.json", "jobs/e/f/g/deep.json", "jobs/top.txt",
                          "jobsarchive/z/old.json"}) {
    client_->put(bucket_, key, bytes_of("{}"));
  }
  const std::vector<std::string> expected{"jobs/a/", "jobs/b/", "jobs/c d+e/", "jobs/e/"};
  std::uint64_t requests = 0;
  EXPECT_EQ(client_->list_prefixes(bucket_, "jobs/", &requests), expected);
  EXPECT_EQ(requests, 1u);
  // Two entries a page: the four prefixes and the one object take three pages.
  requests = 0;
  EXPECT_EQ(client_->list_prefixes(bucket_, "jobs/", &requests, 2), expected);
  EXPECT_EQ(requests, 3u);
  EXPECT_TRUE(client_->list_prefixes(bucket_, "none/").empty());
}

TEST_F(S3ClientTest, RangedReads) {
  const std::string body = "0123456789abcdefghij";
  client_->put(bucket_, "events/e.tfevents", bytes_of(body));
  EXPECT_EQ(text_of(client_->get_range(bucket_, "events/e.tfevents", {3, 4})), "3456");
  EXPECT_EQ(text_of(client_->get_range(bucket_, "events/e.tfevents", {15, 100})), "fghij");
  EXPECT_EQ(client_->get_range(bucket_, "events/e.tfevents", {20, 5}).size(), 0u);
  EXPECT_EQ(client_->get_range(bucket_, "events/e.tfevents", {100, 5}).size(), 0u);
  EXPECT_EQ(client_->get_range(bucket_, "events/e.tfevents", {3, 0}).size(), 0u);
  const auto gets = client_->counts().gets;
  const std::vector<S3ByteRange> ranges = {{0, 2}, {10, 3}, {18, 10}, {5, 0}, {2, 1}};
  const auto parts = client_->get_ranges(bucket_, "events/e.tfevents", ranges);
  ASSERT_EQ(parts.size(), 5u);
  EXPECT_EQ(text_of(parts[0]), "01");
  EXPECT_EQ(text_of(parts[1]), "abc");
  EXPECT_EQ(text_of(parts[2]), "ij");
  EXPECT_EQ(parts[3].size(), 0u);
  EXPECT_EQ(text_of(parts[4]), "2");
  EXPECT_EQ(client_->counts().gets - gets, 4u);  // the empty range costs no request
}

TEST_F(S3ClientTest, MissingBucketAndMissingKeyAreNamed) {
  const std::string missing = server_->new_bucket("absent");
  const std::string bucket_error = storage_error_of([&] { client_->list(missing, "job/"); });
  EXPECT_THAT(bucket_error, HasSubstr("s3://" + missing));
  EXPECT_THAT(bucket_error, HasSubstr("no such bucket"));
  EXPECT_THAT(bucket_error, HasSubstr("NoSuchBucket"));
  const std::string key_error = storage_error_of([&] { client_->get(bucket_, "job/none.json"); });
  EXPECT_THAT(key_error, HasSubstr("s3://" + bucket_ + "/job/none.json"));
  EXPECT_THAT(key_error, HasSubstr("no such object"));
  EXPECT_THAT(key_error, HasSubstr("NoSuchKey"));
}

TEST_F(S3ClientTest, AnUnreachableEndpointFailsAfterItsRetries) {
  S3ClientOptions options;
  options.max_attempts = 3;
  options.backoff_base = std::chrono::milliseconds(10);
  // Port 1 on the loopback: nothing listens there, connections are refused at once.
  const auto client = server_->client_via("http://127.0.0.1:1", options);
  const std::string error = storage_error_of([&] { client->list(bucket_, "job/"); });
  EXPECT_THAT(error, HasSubstr("s3://" + bucket_ + "/job/ (listing)"));  // the prefix too
  EXPECT_THAT(error, HasSubstr("after 3 attempts"));
  EXPECT_EQ(client->counts().retries, 2u);
}

TEST_F(S3ClientTest, AHungConnectionIsTimedOutAndRetried) {
  client_->put(bucket_, "k.json", bytes_of("value"));
  testing::TcpProxy proxy(server_->port());
  proxy.stall_next_connections(1);
  S3ClientOptions options;
  options.request_timeout = std::chrono::milliseconds(300);
  options.backoff_base = std::chrono::milliseconds(10);
  const auto client = server_->client_via(proxy.endpoint(), options);
  EXPECT_EQ(text_of(client->get(bucket_, "k.json")), "value");
  EXPECT_EQ(client->counts().retries, 1u);
}

TEST_F(S3ClientTest, ARequestWaitsOutAServerThatIsDownForAWhile) {
  client_->put(bucket_, "k.json", bytes_of("value"));
  testing::TcpProxy proxy(server_->port());
  S3ClientOptions options;
  options.backoff_base = std::chrono::milliseconds(100);
  const auto client = server_->client_via(proxy.endpoint(), options);
  EXPECT_EQ(text_of(client->get(bucket_, "k.json")), "value");  // a kept-alive connection
  proxy.go_down();
  std::thread back([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    proxy.come_up();
  });
  EXPECT_EQ(client->list(bucket_, "").size(), 1u);
  back.join();
  EXPECT_GE(client->counts().retries, 1u);
}

}  // namespace
}  // namespace rulestream
