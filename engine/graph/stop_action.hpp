#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/graph/pipeline_config.hpp"

namespace rulestream {

// "SIGTERM", "TERM", "term" or "15" -> 15. Throws std::invalid_argument naming the text.
int parse_signal(std::string_view text);
// 15 -> "SIGTERM"; "signal 42" for one without a name.
std::string signal_name(int signal);

// For messages: "send SIGTERM to process 1234", "run `touch /tmp/stop`".
std::string describe(const StopAction& action);

// How long a pipeline's end waits for the stop commands it started to say how they ended.
inline constexpr std::chrono::seconds kStopCommandWait{10};

// Who asked for a stop, for the command's environment and the messages.
struct StopRequest {
  std::string rule_configuration;
  std::string rule;
  std::string trial;
  std::int64_t step = 0;
};

// Carries out stop actions without holding up the caller (a rule's node in the pipeline):
// a signal is sent at once; a command is started through /bin/sh (stdin from /dev/null, its
// stdout and stderr to our stderr, so events on stdout stay clean) and a waiter thread records
// how it exits. The command sees RULESTREAM_RULE_CONFIGURATION, RULESTREAM_RULE,
// RULESTREAM_TRIAL and RULESTREAM_STEP in its environment.
//
// Failures (no such process, a command that cannot start or exits non-zero) never throw: each
// is passed to `on_failure` as one line naming the rule and the action (from the caller's
// thread, or the waiter's for a command's exit), and recorded in the outcome.
class StopActionRunner {
 public:
  using FailureCallback = std::function<void(const std::string& line)>;

  explicit StopActionRunner(FailureCallback on_failure);
  // Waits for no command: finish() decides how long to wait.
  ~StopActionRunner();
  StopActionRunner(const StopActionRunner&) = delete;
  StopActionRunner& operator=(const StopActionRunner&) = delete;

  // Thread-safe; returns at once.
  void run(const StopAction& action, const StopRequest& request);

  // Waits up to `timeout` for the commands started so far, then returns what each rule
  // configuration's actions did, one sentence per action in the order they ran ("sent SIGTERM
  // to process 1234", "stop command failed: `false` exited with status 1"). A command still
  // running by then is left running and said to be. No failure is reported after this returns.
  std::map<std::string, std::vector<std::string>> finish(std::chrono::milliseconds timeout);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace rulestream
