#include "tests/support/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <system_error>

namespace rulestream::testing {

ChildProcess::ChildProcess(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category());
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category());
  pid_ = ::fork();
  if (pid_ < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (pid_ == 0) {
    // Only async-signal-safe calls here: the test process has other threads.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGINT, SIG_DFL);  // an ignored SIGINT would survive exec
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, STDIN_FILENO);
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_pipe[1], STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  fds_[0] = out_pipe[0];
  fds_[1] = err_pipe[0];
}

ChildProcess::~ChildProcess() {
  if (!exit_code_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  for (const int fd : fds_) {
    if (fd >= 0) ::close(fd);
  }
}

bool ChildProcess::read_until(const std::function<bool()>& done, Clock::time_point deadline) {
  while (!done()) {
    if (Clock::now() >= deadline || !pump(deadline)) return done();
  }
  return true;
}

std::optional<int> ChildProcess::wait_for_exit(Clock::time_point deadline) {
  while (true) {
    const bool open = pump(deadline);
    if (!open && running()) ::usleep(10'000);
    if (!open && !running()) return exit_code_;
    if (Clock::now() >= deadline) return std::nullopt;
  }
}

bool ChildProcess::running() {
  if (exit_code_) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return true;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return false;
}

void ChildProcess::signal(int number) {
  // Never a PID already reaped: it may belong to another process by now.
  if (!exit_code_) ::kill(pid_, number);
}

bool ChildProcess::pump(Clock::time_point deadline) {
  pollfd polls[2];
  nfds_t count = 0;
  for (const int fd : fds_) {
    if (fd >= 0) polls[count++] = {fd, POLLIN, 0};
  }
  if (count == 0) return false;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  const int timeout = static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 100));
  if (::poll(polls, count, timeout) <= 0) return true;
  for (nfds_t i = 0; i < count; ++i) {
    if (polls[i].revents == 0) continue;
    const int which = polls[i].fd == fds_[0] ? 0 : 1;
    char chunk[4096];
    const ssize_t got = ::read(polls[i].fd, chunk, sizeof chunk);
    if (got > 0) {
      buffers_[which].append(chunk, static_cast<std::size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      ::close(fds_[which]);
      fds_[which] = -1;
    }
  }
  return true;
}

}  // namespace rulestream::testing
