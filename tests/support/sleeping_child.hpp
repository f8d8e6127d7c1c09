#pragma once

#include <sys/types.h>

namespace rulestream::testing {

// A `sleep 60` the test starts, for stop actions to signal. The destructor kills (SIGKILL) and
// reaps it if the test did not.
class SleepingChild {
 public:
  SleepingChild();  // throws std::runtime_error when it cannot start
  ~SleepingChild();
  SleepingChild(const SleepingChild&) = delete;
  SleepingChild& operator=(const SleepingChild&) = delete;

  pid_t pid() const { return pid_; }
  // Waits for the child to end and returns its wait status (WIFSIGNALED, WTERMSIG, ...).
  int wait();

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
};

}  // namespace rulestream::testing
