#pragma once

// Where the coordinator's Redis is: `redis://HOST:PORT[/DB]`, as `serve --coordinator` takes it.

#include <cstdint>
#include <string>
#include <string_view>

namespace rulestream {

struct RedisEndpoint {
  std::string host;
  std::uint16_t port = 6379;
  int database = 0;

  // "HOST:PORT" (IPv6 hosts in brackets), for messages: never a password, as none is taken.
  std::string describe() const;
};

// `redis://HOST[:PORT][/DB]`: HOST a name or an address (IPv6 in brackets), PORT 1..65535
// (6379 if left out), DB 0..15 (0 if left out). std::invalid_argument naming what is wrong
// otherwise; a URL with user information is refused, so a password never reaches a message.
RedisEndpoint parse_redis_url(std::string_view url);

}  // namespace rulestream
