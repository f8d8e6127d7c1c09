#pragma once

// redis-server on 127.0.0.1 and a free port, saving nothing to disk, for the coordinator's
// tests: each test starts its own (it starts in milliseconds) and it stops with the test.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "apps/coordination/redis_endpoint.hpp"
#include "tests/support/child_process.hpp"

namespace rulestream::testing {

// Not thread-safe: one test thread drives it. Stopped (SIGTERM, then reaped) when destroyed.
class RedisTestServer {
 public:
  // A running server, or null with `why_not` saying why (redis-server not installed, or it
  // did not start).
  static std::unique_ptr<RedisTestServer> start(std::string& why_not);
  ~RedisTestServer();
  RedisTestServer(const RedisTestServer&) = delete;
  RedisTestServer& operator=(const RedisTestServer&) = delete;

  std::uint16_t port() const { return port_; }
  RedisEndpoint endpoint() const { return {"127.0.0.1", port_, 0}; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  // Stops the server and starts it again, empty, on the same port (a restart: connections
  // held by clients break). False if it does not come back.
  bool restart();
  // Stops the server (SIGSTOP) for `duration`, then lets it go on (SIGCONT): a server that
  // neither answers nor closes connections, as a paused machine or a partition looks.
  void freeze(std::chrono::milliseconds duration);

 private:
  RedisTestServer() = default;
  bool launch();

  std::uint16_t port_ = 0;
  std::unique_ptr<ChildProcess> child_;
};

// Whether the Redis tests must fail rather than skip when no redis-server can start:
// RULESTREAM_REQUIRE_REDIS=1 (which .ci/run sets) or CI set.
bool redis_server_required();

// The base of the coordinator's suites: a redis-server of the test's own (the test skips
// without one, or fails when redis_server_required()). A subclass's SetUp() calls this one
// first and returns if IsSkipped() or HasFatalFailure().
class RedisServerTest : public ::testing::Test {
 protected:
  void SetUp() override;

  std::unique_ptr<RedisTestServer> redis_;
};

}  // namespace rulestream::testing
