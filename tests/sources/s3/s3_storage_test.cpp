// S3Storage over a real S3-compatible server: trial paths under a prefix, *.tmp left out,
// reads, and how it is opened from the environment.
#include "sources/s3/s3_storage.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "core/model/exceptions.hpp"
#include "sources/open/storage_factory.hpp"
#include "tests/support/s3_test_server.hpp"

namespace rulestream {
namespace {

using testing::bytes_of;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::storage_error_of;

std::vector<std::string> paths_of(const std::vector<StoredObject>& objects) {
  std::vector<std::string> paths;
  for (const auto& object : objects) paths.push_back(object.path);
  return paths;
}

class S3StorageTest : public testing::S3ServerTest {
 protected:
  S3StorageTest() : S3ServerTest("storage") {}

  void SetUp() override {
    S3ServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    for (const std::string key :
         {"jobs/run +1/collections/000000000/worker_0_collections.json",
          "jobs/run +1/index/000000000/000000000000_worker_0.json",
          "jobs/run +1/index/000000000/000000000001_worker_0.json",
          "jobs/run +1/index/000000000/000000000002_worker_0.json.tmp",
          "jobs/run +1/events/000000000000/000000000000_worker_0.tfevents",
          "jobs/run +1/training_job_end.ts", "jobs/run +10/index/000000000/x.json"}) {
      client_->put(bucket_, key, bytes_of("0123456789"));
    }
    storage_ =
        std::make_shared<S3Storage>(parse_s3_uri("s3://" + bucket_ + "/jobs/run +1"), client_);
  }

  std::shared_ptr<S3Storage> storage_;
};

TEST_F(S3StorageTest, ListsTrialPathsUnderItsPrefixOnlyWithoutTmpFiles) {
  EXPECT_EQ(storage_->describe(), "s3://" + bucket_ + "/jobs/run +1");
  EXPECT_THAT(paths_of(storage_->list("index/")),
              ElementsAre("index/000000000/000000000000_worker_0.json",
                          "index/000000000/000000000001_worker_0.json"));
  EXPECT_THAT(paths_of(storage_->list("", "index/000000000/000000000000_worker_0.json")),
              ElementsAre("index/000000000/000000000001_worker_0.json", "training_job_end.ts"));
  const auto all = storage_->list("");
  EXPECT_EQ(all.size(), 5u);  // not the .tmp, not "run +10"
  EXPECT_EQ(all.front().size, 10u);
  std::uint64_t requests = 0;
  storage_->list("index/", {}, requests);
  EXPECT_EQ(requests, 1u);
}

TEST_F(S3StorageTest, ExistsReadsAndRanges) {
  EXPECT_TRUE(storage_->root_exists());
  EXPECT_TRUE(storage_->exists("training_job_end.ts"));
  EXPECT_FALSE(storage_->exists("index/000000000/000000000009_worker_0.json"));
  EXPECT_EQ(storage_->read("training_job_end.ts").as_string_view(), "0123456789");
  EXPECT_EQ(storage_->read_range("training_job_end.ts", 4, 3).as_string_view(), "456");
  EXPECT_EQ(storage_->read_range("training_job_end.ts", 8, 30).as_string_view(), "89");
  EXPECT_THAT(storage_error_of([&] { storage_->read("../run +10/index/000000000/x.json"); }),
              HasSubstr("is not inside the trial"));
  // A prefix nothing was written under yet: the root exists (the bucket does), empty.
  const S3Storage empty(parse_s3_uri("s3://" + bucket_ + "/jobs/none"), client_);
  EXPECT_TRUE(empty.root_exists());
  EXPECT_TRUE(empty.list("").empty());
}

TEST_F(S3StorageTest, OpenTakesCredentialsAndEndpointFromTheEnvironmentOrOptions) {
  const std::string uri = "s3://" + bucket_ + "/jobs/run +1";
  const auto from_environment = S3Storage::open(uri, {}, server_->environment());
  EXPECT_TRUE(from_environment->exists("training_job_end.ts"));
  // --s3-endpoint wins over AWS_ENDPOINT_URL.
  const auto from_option =
      S3Storage::open(uri, {.s3_endpoint = server_->endpoint()},
                      server_->environment({{"AWS_ENDPOINT_URL", "http://127.0.0.1:1"}}));
  EXPECT_TRUE(from_option->exists("training_job_end.ts"));
  const std::string error = storage_error_of([&] {
    S3Storage::open(uri, {}, server_->environment({{"AWS_SECRET_ACCESS_KEY", ""}}));
  });
  EXPECT_THAT(error, HasSubstr(uri));
  EXPECT_THAT(error, HasSubstr("AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"));
}

TEST_F(S3StorageTest, AMissingBucketSaysSo) {
  const S3Storage missing(parse_s3_uri("s3://" + server_->new_bucket("absent") + "/job"), client_);
  EXPECT_THAT(storage_error_of([&] { missing.root_exists(); }), HasSubstr("no such bucket"));
}

}  // namespace
}  // namespace rulestream
