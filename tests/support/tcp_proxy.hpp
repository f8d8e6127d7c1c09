#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace rulestream::testing {

// A TCP proxy on 127.0.0.1 in front of a local server, for fault tests: it can make the server
// look slow, hang, or go away and come back on the same port (while the server keeps its data).
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

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace rulestream::testing
