#include "tests/support/sleeping_child.hpp"

#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <stdexcept>
#include <string>

extern char** environ;

namespace rulestream::testing {

SleepingChild::SleepingChild() {
  std::string program = "sleep", seconds = "60";
  char* argv[] = {program.data(), seconds.data(), nullptr};
  if (::posix_spawnp(&pid_, "sleep", nullptr, nullptr, argv, environ) != 0) {
    throw std::runtime_error("cannot start `sleep 60`");
  }
}

SleepingChild::~SleepingChild() {
  if (reaped_) return;
  ::kill(pid_, SIGKILL);
  wait();
}

int SleepingChild::wait() {
  int status = 0;
  while (::waitpid(pid_, &status, 0) == -1 && errno == EINTR) {
  }
  reaped_ = true;
  return status;
}

}  // namespace rulestream::testing
