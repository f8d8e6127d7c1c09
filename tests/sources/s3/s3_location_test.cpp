#include "sources/s3/s3_location.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/model/exceptions.hpp"

namespace rulestream {
namespace {

using ::testing::HasSubstr;

TEST(S3UriEncode, KeepsUnreservedAndEncodesTheRestInUpperCaseHex) {
  EXPECT_EQ(s3_uri_encode("AZaz09-._~", false), "AZaz09-._~");
  EXPECT_EQ(s3_uri_encode("a+b=c d", false), "a%2Bb%3Dc%20d");
  EXPECT_EQ(s3_uri_encode("a/b", false), "a%2Fb");
  EXPECT_EQ(s3_uri_encode("a/b", true), "a/b");
  EXPECT_EQ(s3_uri_encode("*!'()&?#%", false), "%2A%21%27%28%29%26%3F%23%25");
  // Non-ASCII: every UTF-8 byte, upper-case hex.
  EXPECT_EQ(s3_uri_encode("\xC3\xA9\xE2\x82\xAC", true), "%C3%A9%E2%82%AC");
}

TEST(CanonicalQuery, SortsByEncodedNameThenValueAndEncodesBoth) {
  EXPECT_EQ(canonical_query({{"prefix", "run 1/index/"},
                             {"list-type", "2"},
                             {"start-after", "a+b=c/\xC3\xA9"},
                             {"continuation-token", "1/x+y=="}}),
            "continuation-token=1%2Fx%2By%3D%3D&list-type=2&prefix=run%201%2Findex%2F&"
            "start-after=a%2Bb%3Dc%2F%C3%A9");
  // Upper-case letters sort before lower-case ones, as bytes do.
  EXPECT_EQ(canonical_query({{"b", "1"}, {"B", "2"}, {"a", "2"}, {"a", "1"}}), "B=2&a=1&a=2&b=1");
  EXPECT_EQ(canonical_query({}), "");
}

TEST(ParseS3Uri, SplitsBucketAndPrefixWithATrailingSlash) {
  const auto location = parse_s3_uri("s3://my-bucket/jobs/run 1/");
  EXPECT_EQ(location.bucket, "my-bucket");
  EXPECT_EQ(location.prefix, "jobs/run 1/");
  EXPECT_EQ(location.uri(), "s3://my-bucket/jobs/run 1");
  EXPECT_EQ(parse_s3_uri("s3://my-bucket/jobs/run").prefix, "jobs/run/");
  EXPECT_EQ(parse_s3_uri("s3://my-bucket").prefix, "");
  EXPECT_EQ(parse_s3_uri("s3://my-bucket/").prefix, "");
  EXPECT_EQ(parse_s3_uri("s3://my-bucket").uri(), "s3://my-bucket");
}

TEST(ParseS3Uri, RejectsBadBucketNamesNamingTheUri) {
  for (const std::string uri : {"s3://", "s3://ab/x", "s3://Upper/x", "s3://under_score/x",
                                "s3://-dash/x", "http://bucket/x"}) {
    try {
      parse_s3_uri(uri);
      ADD_FAILURE() << uri << " was accepted";
    } catch (const StorageError& error) {
      EXPECT_THAT(error.what(), HasSubstr(uri));
    }
  }
}

TEST(S3Endpoint, AwsUsesVirtualHostedStyleExceptForDottedBuckets) {
  const auto aws = S3Endpoint::resolve("", "eu-west-1");
  EXPECT_TRUE(aws.is_aws());
  EXPECT_EQ(aws.url("bucket", "a b/c+d.json"),
            "https://bucket.s3.eu-west-1.amazonaws.com/a%20b/c%2Bd.json");
  EXPECT_EQ(aws.url("bucket", "", "list-type=2"),
            "https://bucket.s3.eu-west-1.amazonaws.com/?list-type=2");
  EXPECT_EQ(aws.url("my.bucket", "k"), "https://s3.eu-west-1.amazonaws.com/my.bucket/k");
}

TEST(S3Endpoint, AnOverrideUsesPathStyle) {
  const auto local = S3Endpoint::resolve("http://127.0.0.1:9000/", "us-east-1");
  EXPECT_FALSE(local.is_aws());
  EXPECT_EQ(local.url("bucket", "index/\xC3\xA9.json", "prefix=x"),
            "http://127.0.0.1:9000/bucket/index/%C3%A9.json?prefix=x");
}

TEST(S3Endpoint, AddressingChoosesWhereTheBucketGoes) {
  const auto virtual_local =
      S3Endpoint::resolve("http://localhost:9000/base/", "us-east-1", S3Addressing::Virtual);
  EXPECT_EQ(virtual_local.url("bucket", "a b", "prefix=x"),
            "http://bucket.localhost:9000/base/a%20b?prefix=x");
  const auto path_aws = S3Endpoint::resolve("", "eu-west-1", S3Addressing::Path);
  EXPECT_EQ(path_aws.url("bucket", "k"), "https://s3.eu-west-1.amazonaws.com/bucket/k");
  const auto virtual_aws = S3Endpoint::resolve("", "eu-west-1", S3Addressing::Virtual);
  EXPECT_EQ(virtual_aws.url("bucket", "k"), "https://bucket.s3.eu-west-1.amazonaws.com/k");
}

TEST(S3Endpoint, RejectsWhatIsNotAnHttpUrl) {
  for (const std::string bad :
       {"ftp://host", "127.0.0.1:9000", "http://host/?q=1", "http://user:secret@host"}) {
    try {
      S3Endpoint::resolve(bad, "us-east-1");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const StorageError& error) {
      EXPECT_THAT(error.what(), HasSubstr("S3 endpoint"));
    }
  }
}

}  // namespace
}  // namespace rulestream
