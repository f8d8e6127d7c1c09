#pragma once

// Times as people and tools read them: ISO 8601 (RFC 3339) in UTC.

#include <chrono>
#include <string>

namespace rulestream {

// "2026-11-22T12:00:00.123Z": with milliseconds, as rule events carry it (CloudWatch,
// Alertmanager and most log tooling read it).
std::string iso8601_utc(std::chrono::system_clock::time_point time);

// "2026-11-22T12:00:00Z": to the second (a page's dates, an S3 credential's expiry).
std::string iso8601_utc_seconds(std::chrono::system_clock::time_point time);

}  // namespace rulestream
