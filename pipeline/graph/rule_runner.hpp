#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "pipeline/graph/configuration_check.hpp"
#include "pipeline/graph/sink_routing.hpp"
#include "pipeline/graph/stop_action.hpp"
#include "pipeline/model/mode.hpp"
#include "pipeline/model/rule_event.hpp"
#include "pipeline/trial/trial.hpp"
#include "rules/rule.hpp"
#include "sinks/sink.hpp"

namespace rulestream {

// A step the assembler released: rules may evaluate it.
struct StepReady {
  std::int64_t step = 0;
  Mode mode = Mode::Global;
  std::int64_t mode_step = 0;
  bool incomplete = false;  // released without every worker's files (grace ran out, job ended)
};
// A rule that watches the clock is due a look at it (Rule::invoke_at_time).
struct TimeCheck {};
// What a rule's serial node handles: steps in order, and time checks between them.
using RuleMessage = std::variant<StepReady, TimeCheck>;

// What every rule's runner shares with the pipeline. Everything pointed to outlives the runners.
struct RuleRunnerContext {
  const Trial* base = nullptr;  // names the trial in events; gives a finding's mode and mode step
  const SinkRouting* routing = nullptr;
  const std::vector<std::unique_ptr<Sink>>* sinks = nullptr;
  StopActionRunner* stopper = nullptr;
  // Reports what went wrong outside a rule's own logic (a file, a sink); any thread.
  std::function<void(std::string path, std::string message)> report_problem;
  // Whether a step is one the run evaluates (--start-step, --end-step).
  std::function<bool(std::int64_t step)> in_range;
  // Set once the job's end marker is seen: silence is then the end, not a stall.
  const std::atomic<bool>* end_marker_seen = nullptr;
};

// One configured rule and how its evaluation is going: the body of the rule's serial node.
//
// Concurrency: handle() is called by the rule's own serial node, one message at a time, and
// nothing else touches the runner's counts until the graph has drained (then status() reads
// them). claim_time_check() is safe from any thread. Different runners run in parallel and
// share only the context (sinks are thread-safe; the stop action runner is).
class RuleRunner {
 public:
  RuleRunner(std::size_t index, ConfiguredRule configured, const RuleRunnerContext& context);

  // Evaluates a released step, or looks at the clock, and sends what fires to the rule's sinks.
  // A rule that throws anything but smdebug's "not available" exceptions is in Error from then
  // on; problems reading files or writing to sinks are reported and evaluation goes on.
  void handle(const RuleMessage& message);

  // True when no time check is queued on the node (and one now is): the caller puts it. A rule
  // busy with a backlog of steps gets one time check, not one per tick.
  bool claim_time_check() { return !time_check_queued_.exchange(true); }

  // The rule's status event at the end of the run, also sent to the rule's sinks: IssuesFound
  // when it fired; Error when it threw, when data it asked for could not be read at some step,
  // or when it evaluated no step at all (a rule that looked at nothing has not found the job
  // healthy), or when the job could not be read to the end (`read_whole_job` false); otherwise
  // NoIssuesFound. `before` is said ahead of the rule's own message (how the run ended), each
  // of `after` behind it (what its stop actions did).
  RuleEvent finish(const std::string& before, const std::vector<std::string>& after,
                   bool read_whole_job = true) const;

  const RuleConfig& config() const { return config_; }
  const Rule& rule() const { return *rule_; }
  std::int64_t fired() const { return fired_; }
  std::chrono::steady_clock::duration busy() const { return busy_; }  // in evaluate()

 private:
  void evaluate(const StepReady& ready);
  void check_time();
  // Sends a condition-met event out and, the first time the rule fires, runs its stop actions.
  void fire(RuleEvent event);
  void dispatch(const RuleEvent& event) const;
  // The rule's data could not be read at `step` (a file's format, storage): remembered for the
  // status.
  void unreadable(std::int64_t step, const std::string& reason);
  // Why the rule's silence is no all-clear (see finish()); empty when it is one.
  std::string why_not_evaluated() const;

  std::size_t index_;  // in configuration order
  RuleConfig config_;
  std::unique_ptr<Rule> rule_;
  // What runs the first time the rule fires: its own stop actions, or the defaults when it asks
  // to stop training and has none.
  std::vector<StopAction> stop_actions_;
  const RuleRunnerContext& context_;
  std::int64_t steps_offered_ = 0;  // released steps in range, while not in Error
  std::int64_t evaluated_ = 0;
  std::int64_t unreadable_steps_ = 0;
  std::string first_unreadable_;
  std::int64_t fired_ = 0;
  std::chrono::steady_clock::duration busy_{};
  bool errored_ = false;
  std::string error_;
  bool stop_ran_ = false;
  std::atomic<bool> time_check_queued_{false};
};

}  // namespace rulestream
