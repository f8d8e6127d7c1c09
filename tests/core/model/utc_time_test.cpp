// ISO 8601 times in UTC, worked out from the calendar by hand.
#include "core/model/utc_time.hpp"

#include <gtest/gtest.h>

namespace rulestream {
namespace {

using namespace std::chrono;

TEST(UtcTime, MillisecondsAndSecondsInUtc) {
  // 2026-11-22 is 20,779 days after 1970-01-01; 12:00:00.123 after its midnight.
  const system_clock::time_point noon =
      sys_days{year{2026} / November / 22} + hours{12} + milliseconds{123} + microseconds{999};
  EXPECT_EQ(time_point_cast<days>(noon).time_since_epoch().count(), 20779);
  EXPECT_EQ(iso8601_utc(noon), "2026-11-22T12:00:00.123Z");  // truncated, not rounded
  EXPECT_EQ(iso8601_utc_seconds(noon), "2026-11-22T12:00:00Z");
  EXPECT_EQ(iso8601_utc(system_clock::time_point{}), "1970-01-01T00:00:00.000Z");
  // A leap day, the last millisecond of it.
  const system_clock::time_point late = sys_days{year{2028} / February / 29} + hours{23} +
                                        minutes{59} + seconds{59} + milliseconds{999};
  EXPECT_EQ(iso8601_utc(late), "2028-02-29T23:59:59.999Z");
  EXPECT_EQ(iso8601_utc_seconds(late), "2028-02-29T23:59:59Z");
}

}  // namespace
}  // namespace rulestream
