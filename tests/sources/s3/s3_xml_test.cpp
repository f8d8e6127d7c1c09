#include "sources/s3/s3_xml.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/model/exceptions.hpp"

namespace rulestream {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

// A listing with delimiter '/' as S3 documents it (ListObjectsV2, "Listing keys
// hierarchically"): objects at the prefix's level in Contents, the rest folded into
// CommonPrefixes.
TEST(S3ListParseTest, ReadsCommonPrefixes) {
  const S3ListPage page = parse_list_objects_v2(
      R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>team</Name><Prefix>jobs/</Prefix><Delimiter>/</Delimiter><KeyCount>3</KeyCount>
  <MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>
  <Contents><Key>jobs/README</Key><Size>9</Size>
    <LastModified>2026-11-22T13:56:03.000Z</LastModified></Contents>
  <CommonPrefixes><Prefix>jobs/run-1/</Prefix></CommonPrefixes>
  <CommonPrefixes><Prefix>jobs/run-2/</Prefix></CommonPrefixes>
</ListBucketResult>)",
      "s3://team/jobs/");
  ASSERT_EQ(page.objects.size(), 1u);
  EXPECT_EQ(page.objects[0].key, "jobs/README");
  EXPECT_EQ(page.common_prefixes, (std::vector<std::string>{"jobs/run-1/", "jobs/run-2/"}));
  EXPECT_FALSE(page.truncated);
}

TEST(S3ListParseTest, ACommonPrefixWithoutItsPrefixIsAFormatError) {
  EXPECT_THROW(parse_list_objects_v2("<ListBucketResult><IsTruncated>false</IsTruncated>"
                                     "<CommonPrefixes></CommonPrefixes></ListBucketResult>",
                                     "s3://team/jobs/"),
               FormatError);
}

TEST(S3TimestampTest, ReadsIso8601WithAndWithoutAFraction) {
  // 2026-11-22T13:56:03Z is 1,795,355,763 s after the epoch (date -u -d ... +%s).
  EXPECT_EQ(parse_s3_timestamp("2026-11-22T13:56:03Z"), 1'795'355'763 * kSecond);
  EXPECT_EQ(parse_s3_timestamp("2026-11-22T13:56:03.250Z"), 1'795'355'763 * kSecond + 250'000'000);
  EXPECT_EQ(parse_s3_timestamp("1970-01-01T00:00:00.000000001Z"), 1);
}

TEST(S3TimestampTest, AnUnreadableDateIsUnknown) {
  EXPECT_EQ(parse_s3_timestamp(""), 0);
  EXPECT_EQ(parse_s3_timestamp("yesterday"), 0);
  EXPECT_EQ(parse_s3_timestamp("2026-11-22T13:56:0xZ"), 0);
}

// A broken or hostile server's dates: int64 nanoseconds end in April 2262. Before the fix the
// multiplication overflowed (undefined behaviour; UBSan aborted the tests).
TEST(S3TimestampTest, ADateBeyondWhatNanosecondsHoldIsUnknownNotAnOverflow) {
  EXPECT_EQ(parse_s3_timestamp("2300-01-01T00:00:00.000Z"), 0);
  EXPECT_EQ(parse_s3_timestamp("9999-12-31T23:59:59.999Z"), 0);
  EXPECT_EQ(parse_s3_timestamp("1969-12-31T23:59:59Z"), 0);
  // The last whole second that fits is kept.
  EXPECT_GT(parse_s3_timestamp("2262-04-11T00:00:00Z"), 0);
}

TEST(S3TimestampTest, EpochSecondsConvertWhereTheyFitAndAreUnknownElsewhere) {
  EXPECT_EQ(epoch_seconds_to_ns(0), 0);
  EXPECT_EQ(epoch_seconds_to_ns(12, 5), 12 * kSecond + 5);
  EXPECT_EQ(epoch_seconds_to_ns(-1), 0);  // curl's "no Last-Modified"
  EXPECT_EQ(epoch_seconds_to_ns(std::numeric_limits<std::int64_t>::max()), 0);
  EXPECT_EQ(epoch_seconds_to_ns(std::numeric_limits<std::int64_t>::max() / kSecond), 0);
  const std::int64_t last = std::numeric_limits<std::int64_t>::max() / kSecond - 1;
  EXPECT_EQ(epoch_seconds_to_ns(last, 999'999'999), last * kSecond + 999'999'999);
}

}  // namespace
}  // namespace rulestream
