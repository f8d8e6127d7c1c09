#pragma once

// A program run as a child process with its stdout and stderr on pipes, so that a test reads
// what it prints while it runs and can signal it (a watch stopped with SIGTERM, ...).

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rulestream::testing {

// Not thread-safe: one test thread drives it. A child still running when this goes away is
// killed (SIGKILL) and reaped.
class ChildProcess {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts args[0] (a path) with args; stdin is /dev/null. std::system_error if it cannot fork.
  explicit ChildProcess(std::vector<std::string> args);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  const std::string& out() const { return buffers_[0]; }
  const std::string& err() const { return buffers_[1]; }

  // Reads what the child prints until `done()` holds; false if the deadline passed first or
  // the child closed its output without it holding.
  bool read_until(const std::function<bool()>& done, Clock::time_point deadline);

  // The exit status (128 + signal when a signal ended it); nullopt if it is still running at
  // the deadline. Everything it printed has been read when this returns a status.
  std::optional<int> wait_for_exit(Clock::time_point deadline);

  bool running();
  void signal(int number);

 private:
  // Reads whatever is available within 100 ms; false once both pipes are closed.
  bool pump(Clock::time_point deadline);

  pid_t pid_ = -1;
  int fds_[2] = {-1, -1};
  std::string buffers_[2];
  std::optional<int> exit_code_;
};

}  // namespace rulestream::testing
