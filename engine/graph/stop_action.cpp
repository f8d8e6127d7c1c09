#include "engine/graph/stop_action.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <csignal>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>

extern char** environ;

namespace rulestream {
namespace {

struct NamedSignal {
  const char* name;
  int number;
};
constexpr NamedSignal kSignals[] = {
    {"SIGHUP", SIGHUP},   {"SIGINT", SIGINT},   {"SIGQUIT", SIGQUIT}, {"SIGABRT", SIGABRT},
    {"SIGKILL", SIGKILL}, {"SIGUSR1", SIGUSR1}, {"SIGUSR2", SIGUSR2}, {"SIGALRM", SIGALRM},
    {"SIGTERM", SIGTERM}, {"SIGCONT", SIGCONT}, {"SIGSTOP", SIGSTOP}, {"SIGTSTP", SIGTSTP}};

std::string uppercase(std::string_view text) {
  std::string out;
  for (const char c : text)
    out.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  return out;
}

std::string errno_text(int error) {
  return std::error_code(error, std::generic_category()).message();
}

std::string exit_text(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by " + signal_name(WTERMSIG(status));
  return "ended with wait status " + std::to_string(status);
}

// The command's environment: ours, with the firing's facts set (replacing inherited ones).
std::vector<std::string> command_environment(const StopRequest& request) {
  const std::vector<std::pair<std::string, std::string>> ours = {
      {"RULESTREAM_RULE_CONFIGURATION", request.rule_configuration},
      {"RULESTREAM_RULE", request.rule},
      {"RULESTREAM_TRIAL", request.trial},
      {"RULESTREAM_STEP", std::to_string(request.step)}};
  std::vector<std::string> environment;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    bool replaced = false;
    for (const auto& [key, value] : ours) replaced = replaced || text.starts_with(key + "=");
    if (!replaced) environment.emplace_back(text);
  }
  for (const auto& [key, value] : ours) environment.push_back(key + "=" + value);
  return environment;
}

// Starts `sh -c command`; the pid, or an errno.
std::pair<pid_t, int> spawn_shell(const std::string& command, const StopRequest& request) {
  std::vector<std::string> environment = command_environment(request);
  std::vector<char*> envp;
  for (auto& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::string shell = "/bin/sh", dash_c = "-c", text = command;
  char* argv[] = {shell.data(), dash_c.data(), text.data(), nullptr};

  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&files, STDERR_FILENO, STDOUT_FILENO);
  // The calling thread's mask and ignored signals must not leak into the command.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigemptyset(&none);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int error = ::posix_spawn(&pid, "/bin/sh", &files, &attributes, argv, envp.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&files);
  return {error == 0 ? pid : -1, error};
}

}  // namespace

int parse_signal(std::string_view text) {
  const std::string name = uppercase(text);
  for (const auto& known : kSignals) {
    if (name == known.name || "SIG" + name == known.name) return known.number;
  }
  int number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (!text.empty() && error == std::errc() && end == text.data() + text.size() && number > 0 &&
      number < NSIG) {
    return number;
  }
  std::string known;
  for (const auto& each : kSignals) known += (known.empty() ? "" : ", ") + std::string(each.name);
  throw std::invalid_argument("unknown signal '" + std::string(text) + "' (known: " + known +
                              ", or a number from 1 to " + std::to_string(NSIG - 1) + ")");
}

std::string signal_name(int signal) {
  for (const auto& known : kSignals) {
    if (known.number == signal) return known.name;
  }
  return "signal " + std::to_string(signal);
}

std::string describe(const StopAction& action) {
  if (action.pid)
    return "send " + signal_name(action.signal) + " to process " + std::to_string(*action.pid);
  return "run `" + action.command + "`";
}

struct StopActionRunner::State {
  FailureCallback on_failure;
  std::mutex mutex;
  std::condition_variable done;
  int running = 0;
  std::map<std::string, std::vector<std::string>> outcomes;
  // Held while on_failure runs, so finish() returns only after the last call.
  std::mutex callback_mutex;
  bool closed = false;  // guarded by callback_mutex

  void fail(const std::string& line) {
    std::lock_guard lock(callback_mutex);
    if (!closed && on_failure) on_failure(line);
  }
};

StopActionRunner::StopActionRunner(FailureCallback on_failure) : state_(std::make_shared<State>()) {
  state_->on_failure = std::move(on_failure);
}

StopActionRunner::~StopActionRunner() {
  std::lock_guard lock(state_->callback_mutex);
  state_->closed = true;
}

void StopActionRunner::run(const StopAction& action, const StopRequest& request) {
  const std::string who = "rule " + request.rule_configuration + " (" + request.rule +
                          ") fired at step " + std::to_string(request.step);
  if (action.pid) {
    const auto pid = static_cast<pid_t>(*action.pid);
    std::string outcome;
    if (::kill(pid, action.signal) == 0) {
      outcome = "sent " + signal_name(action.signal) + " to process " + std::to_string(pid);
    } else {
      outcome = "stop action failed: cannot " + describe(action) + ": " + errno_text(errno);
      state_->fail(who + ": " + outcome);
    }
    std::lock_guard lock(state_->mutex);
    state_->outcomes[request.rule_configuration].push_back(std::move(outcome));
    return;
  }

  const auto [pid, error] = spawn_shell(action.command, request);
  std::size_t slot = 0;
  {
    std::lock_guard lock(state_->mutex);
    auto& outcomes = state_->outcomes[request.rule_configuration];
    slot = outcomes.size();
    outcomes.push_back(error != 0 ? "stop action failed: cannot start `" + action.command +
                                        "`: " + errno_text(error)
                                  : "stop command `" + action.command + "` still running (pid " +
                                        std::to_string(pid) + ")");
    if (error == 0) ++state_->running;
  }
  if (error != 0) {
    state_->fail(who + ": stop action failed: cannot start `" + action.command +
                 "`: " + errno_text(error));
    return;
  }
  // Detached, holding the state: a command may outlive the pipeline (finish() stops waiting),
  // and its waiter must then still have somewhere to write. (`pid = pid`: clang 14 cannot
  // capture a structured binding itself.)
  // Nothing may leave the waiter (an exception out of a thread ends the process), and it must
  // count itself done however it ends, or finish() waits its whole timeout for nothing.
  const auto wait_for_command = [state = state_, pid = pid, slot, who,
                                 configuration = request.rule_configuration,
                                 command = action.command]() noexcept {
    int status = 0;
    pid_t waited = -1;
    do {
      waited = ::waitpid(pid, &status, 0);
    } while (waited == -1 && errno == EINTR);
    const bool ok = waited == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    std::string outcome;
    try {
      outcome = waited != pid
                    ? "stop action failed: lost track of `" + command + "`: " + errno_text(errno)
                : ok ? "ran `" + command + "`"
                     : "stop action failed: `" + command + "` " + exit_text(status);
      if (!ok) state->fail(who + ": " + outcome);
    } catch (...) {  // out of memory for a sentence, or a callback that threw: said as it can be
    }
    std::lock_guard lock(state->mutex);
    if (!outcome.empty()) std::swap(state->outcomes[configuration][slot], outcome);
    --state->running;
    state->done.notify_all();
  };
  try {
    std::thread(wait_for_command).detach();
  } catch (const std::system_error& no_thread) {
    // No thread to wait with: the command runs on, unwatched; say so rather than wait for it.
    const std::lock_guard lock(state_->mutex);
    state_->outcomes[request.rule_configuration][slot] =
        "started `" + action.command + "`, but cannot wait for it: " + no_thread.what();
    --state_->running;
    state_->done.notify_all();
  }
}

std::map<std::string, std::vector<std::string>> StopActionRunner::finish(
    std::chrono::milliseconds timeout) {
  std::map<std::string, std::vector<std::string>> outcomes;
  {
    std::unique_lock lock(state_->mutex);
    state_->done.wait_for(lock, timeout, [this] { return state_->running == 0; });
    outcomes = state_->outcomes;
  }
  std::lock_guard lock(state_->callback_mutex);
  state_->closed = true;
  return outcomes;
}

}  // namespace rulestream
