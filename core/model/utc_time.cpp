#include "core/model/utc_time.hpp"

#include <cstdio>
#include <ctime>

namespace rulestream {
namespace {

std::tm utc_parts(std::chrono::system_clock::time_point time) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(time);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return utc;
}

}  // namespace

std::string iso8601_utc(std::chrono::system_clock::time_point time) {
  using namespace std::chrono;
  const auto ms = floor<milliseconds>(time);
  const auto seconds = floor<std::chrono::seconds>(ms);
  const std::tm utc = utc_parts(seconds);
  char buffer[40];
  const int length =
      std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                    utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min,
                    utc.tm_sec, static_cast<int>((ms - seconds).count()));
  return std::string(buffer, static_cast<std::size_t>(length));
}

std::string iso8601_utc_seconds(std::chrono::system_clock::time_point time) {
  const std::tm utc = utc_parts(std::chrono::floor<std::chrono::seconds>(time));
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace rulestream
