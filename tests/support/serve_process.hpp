#pragma once

// `rulestream serve` run as a child process for a test: on 127.0.0.1 and an ephemeral port
// (read back from what it says on stderr), ready (/readyz) before the constructor returns.

#include <boost/json/value.hpp>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/child_process.hpp"
#include "tests/support/http_get.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream::testing {

// Not thread-safe: one test thread drives it. Killed (SIGKILL) when destroyed still running.
class ServeProcess {
 public:
  // `args` after "serve" (--listen is added). The test fails (ADD_FAILURE, with what serve
  // printed) and port() is 0 when it does not get ready within 30 s.
  explicit ServeProcess(std::vector<std::string> args);

  std::uint16_t port() const { return port_; }
  // GET, with "Authorization: Bearer TOKEN" when `token` is given.
  HttpReply get(const std::string& target, const std::string& token = {}) const;
  // GET `target` and parse its JSON (the test fails on a status other than 200).
  boost::json::value get_json(const std::string& target, const std::string& token = {}) const;
  // Asks /api/jobs every 100 ms until `done` holds for its answer; false after `timeout`.
  bool wait_for_jobs(const std::function<bool(const boost::json::value&)>& done,
                     std::chrono::seconds timeout, const std::string& token = {});
  // What serve printed on stderr so far (read while waiting).
  const std::string& log() const { return child_.err(); }
  // SIGTERM, then its exit status (nullopt if it did not exit within 30 s).
  std::optional<int> stop();
  // SIGTERM, `between`, SIGTERM again (a person who will not wait), then its exit status
  // (nullopt if it did not exit within 30 s of the first).
  std::optional<int> stop_twice(std::chrono::milliseconds between);
  // SIGKILL, as a machine that dies: nothing of it runs after this returns.
  void kill();
  // SIGSTOP and SIGCONT: a process that stops answering for a while (a long pause, a machine
  // that hangs) and then goes on as if nothing happened.
  void pause() { child_.signal(SIGSTOP); }
  void resume() { child_.signal(SIGCONT); }

  // Its state folder (--state-dir), unless the test gave one.
  const std::filesystem::path& state_dir() const { return state_dir_->path(); }

 private:
  std::unique_ptr<TempDir> state_dir_;  // before child_: made first, removed after it ends
  ChildProcess child_;
  std::uint16_t port_ = 0;
};

// The job `id` in an /api/jobs answer, or null.
const boost::json::object* find_job(const boost::json::value& jobs, const std::string& id);
// The job's state ("Running", "Finished", ...), or "" when the answer has no such job.
std::string state_of(const boost::json::value& jobs, const std::string& id);
// The job's rule of that configuration name; std::out_of_range naming both when it has none.
const boost::json::object& rule_of(const boost::json::object& job,
                                   const std::string& configuration);

}  // namespace rulestream::testing
