#include "tests/support/redis_test_server.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <thread>

#include "tests/support/loopback_ports.hpp"

namespace rulestream::testing {
namespace {

// redis-server on PATH, or in Debian's place.
std::optional<std::filesystem::path> redis_server_binary() {
  if (const char* path = std::getenv("PATH")) {
    std::string_view rest = path;
    while (!rest.empty()) {
      const auto colon = rest.find(':');
      const std::filesystem::path candidate =
          std::filesystem::path(std::string(rest.substr(0, colon))) / "redis-server";
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
      if (colon == std::string_view::npos) break;
      rest = rest.substr(colon + 1);
    }
  }
  if (::access("/usr/bin/redis-server", X_OK) == 0) return "/usr/bin/redis-server";
  return std::nullopt;
}

}  // namespace

std::unique_ptr<RedisTestServer> RedisTestServer::start(std::string& why_not) {
  if (!redis_server_binary()) {
    why_not = "redis-server is not installed (Debian's redis-server; scripts/install-deps.sh)";
    return nullptr;
  }
  std::unique_ptr<RedisTestServer> server(new RedisTestServer());
  // Another process may take the free port first: a few tries.
  for (int attempt = 0; attempt < 5; ++attempt) {
    server->port_ = free_port();
    if (server->port_ != 0 && server->launch()) return server;
  }
  why_not = "redis-server did not start on 127.0.0.1; it said:\n" +
            (server->child_ ? server->child_->out() + server->child_->err() : std::string());
  return nullptr;
}

bool RedisTestServer::launch() {
  child_.reset();
  // Nothing saved, nothing appended, nothing beyond the loopback; warnings only, so that the
  // pipe its log goes to never fills while nobody reads it.
  child_ = std::make_unique<ChildProcess>(std::vector<std::string>{
      redis_server_binary()->string(), "--port", std::to_string(port_), "--bind", "127.0.0.1",
      "--save", "", "--appendonly", "no", "--loglevel", "warning", "--protected-mode", "yes",
      // DEBUG SLEEP makes a slow server for the timeout tests (off by default since Redis 7).
      "--enable-debug-command", "local"});
  const auto deadline = ChildProcess::Clock::now() + std::chrono::seconds(10);
  while (ChildProcess::Clock::now() < deadline) {
    if (!child_->running()) return false;
    if (accepts_connections(port_)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

RedisTestServer::~RedisTestServer() {
  if (child_ && child_->running()) {
    child_->signal(SIGTERM);
    child_->wait_for_exit(ChildProcess::Clock::now() + std::chrono::seconds(10));
  }
}

bool RedisTestServer::restart() {
  child_->signal(SIGTERM);
  child_->wait_for_exit(ChildProcess::Clock::now() + std::chrono::seconds(10));
  return launch();
}

void RedisTestServer::freeze(std::chrono::milliseconds duration) {
  child_->signal(SIGSTOP);
  std::this_thread::sleep_for(duration);
  child_->signal(SIGCONT);
}

bool redis_server_required() {
  const char* require = std::getenv("RULESTREAM_REQUIRE_REDIS");
  const char* ci = std::getenv("CI");
  return (require != nullptr && std::string_view(require) == "1") || (ci != nullptr && *ci != '\0');
}

void RedisServerTest::SetUp() {
  std::string why_not;
  redis_ = RedisTestServer::start(why_not);
  if (redis_) return;
  if (redis_server_required()) {
    FAIL() << why_not << " (required: CI or RULESTREAM_REQUIRE_REDIS=1)";
  }
  GTEST_SKIP() << why_not;
}

}  // namespace rulestream::testing
