#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace rulestream::testing {

// One HTTP request as the proxy saw it go by on the wire.
struct ProxiedRequest {
  std::string method;  // "GET", "HEAD", ...
  std::string target;  // the request target as sent: "/bucket/key?query", percent-encoded
  std::string range;   // the Range header's value ("bytes=10-19"), empty without one
};

// A TCP proxy on 127.0.0.1 in front of a local server, for fault tests: it can make the server
// look slow, hang, or go away and come back on the same port (while the server keeps its data).
// It also records the HTTP requests that pass through it (their request lines and Range
// headers), so that a test can check what a client really asked for.
// Runs its own thread; every method may be called from any thread.
class TcpProxy {
 public:
  explicit TcpProxy(std::uint16_t upstream_port);
  ~TcpProxy();
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  std::uint16_t port() const;
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port()); }

  // Each chunk of the server's answers is held this long before it is passed on.
  void set_response_delay(std::chrono::milliseconds delay);
  // The next `count` connections are accepted and then ignored: requests on them hang.
  void stall_next_connections(int count);
  // Closes the listening socket and every connection (clients see refused connections), and
  // listens again on the same port. Both return once done.
  void go_down();
  void come_up();
  // After `chunks` more chunks of answers have been passed on, goes down for `duration`, then
  // comes up again by itself.
  void outage_after(std::size_t chunks, std::chrono::milliseconds duration);

  std::size_t chunks_forwarded() const;
  std::size_t outages() const;  // times it went down

  // Every request forwarded so far, in the order their heads arrived (HTTP/1.1, keep-alive and
  // bodies with a Content-Length understood; a connection it cannot parse stops being recorded).
  std::vector<ProxiedRequest> requests() const;

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace rulestream::testing
