#include "apps/coordination/redis_endpoint.hpp"

#include <charconv>
#include <stdexcept>

namespace rulestream {
namespace {

// The decimal number `text` if it lies within [low, high] (low >= 0), else -1.
long long number_in(std::string_view text, long long low, long long high) {
  long long value = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return -1;
  return value < low || value > high ? -1 : value;
}

}  // namespace

std::string RedisEndpoint::describe() const {
  const bool ipv6 = host.find(':') != std::string::npos;
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

RedisEndpoint parse_redis_url(std::string_view url) {
  constexpr std::string_view scheme = "redis://";
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("--coordinator must be redis://HOST:PORT[/DB]: " + why);
  };
  if (!url.starts_with(scheme)) throw bad("'" + std::string(url) + "' is not a redis:// URL");
  std::string_view rest = url.substr(scheme.size());
  if (rest.find('@') != std::string_view::npos) {
    // Not echoed: what precedes '@' may be a password.
    throw bad("user names and passwords are not taken in the URL");
  }
  RedisEndpoint endpoint;
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    const std::string_view database = rest.substr(slash + 1);
    const long long value = number_in(database, 0, 15);
    if (value < 0) throw bad("the database must be 0..15, not '" + std::string(database) + "'");
    endpoint.database = static_cast<int>(value);
    rest = rest.substr(0, slash);
  }
  std::string_view port;
  if (rest.starts_with('[')) {  // [IPv6]:PORT
    const auto close = rest.find(']');
    if (close == std::string_view::npos)
      throw bad("'[' without ']' in '" + std::string(rest) + "'");
    endpoint.host = std::string(rest.substr(1, close - 1));
    const std::string_view after = rest.substr(close + 1);
    if (!after.empty() && !after.starts_with(':'))
      throw bad("junk after ']' in '" + std::string(rest) + "'");
    if (!after.empty()) port = after.substr(1);
  } else if (const auto colon = rest.rfind(':'); colon != std::string_view::npos) {
    endpoint.host = std::string(rest.substr(0, colon));
    port = rest.substr(colon + 1);
  } else {
    endpoint.host = std::string(rest);
  }
  if (endpoint.host.empty()) throw bad("no host in '" + std::string(url) + "'");
  if (!port.empty() || rest.ends_with(':')) {
    const long long value = number_in(port, 1, 65535);
    if (value < 0) throw bad("the port must be 1..65535, not '" + std::string(port) + "'");
    endpoint.port = static_cast<std::uint16_t>(value);
  }
  return endpoint;
}

}  // namespace rulestream
