#pragma once

// A blocking HTTP/1.1 client for tests of `rulestream serve`: one request, one connection to
// 127.0.0.1.

#include <cstdint>
#include <string>

namespace rulestream::testing {

struct HttpReply {
  unsigned status = 0;
  std::string content_type;
  std::string www_authenticate;
  std::string body;
};

// `authorization` empty: no Authorization header. std::system_error when it cannot connect.
HttpReply http_request(std::uint16_t port, const std::string& method, const std::string& target,
                       const std::string& authorization = {});

inline HttpReply http_get(std::uint16_t port, const std::string& target,
                          const std::string& authorization = {}) {
  return http_request(port, "GET", target, authorization);
}

}  // namespace rulestream::testing
