#pragma once

#include <tbb/concurrent_queue.h>

#include <algorithm>
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

#include "core/model/mode.hpp"
#include "core/model/rule_event.hpp"
#include "engine/graph/configuration_check.hpp"
#include "engine/graph/rule_ledger.hpp"
#include "rules/rule.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {

// A step the assembler released: rules may evaluate it.
struct StepReady {
  std::int64_t step = 0;
  Mode mode = Mode::Global;
  std::int64_t mode_step = 0;
  bool incomplete = false;  // released without every worker's files (grace ran out, job ended)
  // Its place in the release order, from 0: what puts outcomes evaluated in parallel back in
  // order (RuleStage).
  std::size_t sequence = 0;
};
// A rule that watches the clock is due a look at it (Rule::invoke_at_time).
struct TimeCheck {};
// What a rule's serial node handles: steps in order, and time checks between them.
using RuleMessage = std::variant<StepReady, TimeCheck>;

// What every rule's runner shares with the pipeline. Everything pointed to outlives the runners.
struct RuleRunnerContext {
  const Trial* base = nullptr;  // gives a finding's mode and mode step, and what the job holds
  // Where outcomes go: events, sinks, stop actions, counts, the error state and the status.
  RuleLedger* ledger = nullptr;
  // Reports what went wrong outside a rule's own logic (a file); any thread.
  std::function<void(std::string path, std::string message)> report_problem;
  // Whether a step is one the run evaluates (--start-step, --end-step).
  std::function<bool(std::int64_t step)> in_range;
  // Set once the job's end marker is seen: silence is then the end, not a stall.
  const std::atomic<bool>* end_marker_seen = nullptr;
};

// What evaluating a rule at one step came to. apply() turns it into counts, problems and
// events, in step order.
struct StepOutcome {
  enum class Kind {
    OutOfRange,  // not a step this run evaluates (--start-step, --end-step)
    Quiet,       // evaluated; the condition was not met
    Fired,       // evaluated; the condition was met (`finding`)
    Skipped,     // what the rule reads was not saved at this step (smdebug skips it too)
    Unreadable,  // its data could not be read (`reason`, in file `path` when known)
    Failed,      // the rule threw: it is in Error from this step on (`reason`)
  };
  Kind kind = Kind::OutOfRange;
  Finding finding;
  // Quiet or Fired: the series on which the condition last met cleared at this step
  // (Rule::take_cleared).
  std::vector<std::string> cleared;
  std::string reason;
  std::string path;
};

// One configured rule and how its evaluation is going: the body of the rule's part of the graph
// (RuleStage).
//
// Concurrency: handle(), apply() and judge() are called by the rule's own serial node, one
// message at a time, and nothing else touches the runner's counts until the graph has drained
// (then finish() reads them). evaluate_on_replica() is called by up to replica_count() threads
// at once, each on its own instance of the rule; read_ahead() by up to steps_read_at_once()
// threads at once, on the rule's one instance, while judge() runs (Rule::reads_ahead says why
// that is safe). claim_time_check() is safe from any thread.
// Different runners run in parallel and share only the context (the ledger keeps each rule's
// entries apart).
class RuleRunner {
 public:
  RuleRunner(std::size_t index, ConfiguredRule configured, const RuleRunnerContext& context);

  // Evaluates a released step, or looks at the clock, and sends what fires to the rule's sinks.
  // A rule that throws anything but smdebug's "not available" exceptions is in Error from then
  // on; problems reading files or writing to sinks are reported and evaluation goes on.
  void handle(const RuleMessage& message);

  // --- Steps evaluated in parallel (rules that evaluate steps independently) ---------------
  // More instances of the rule, made by its factory with the same parameters: with them,
  // replica_count() steps may be evaluated at once. Before the graph runs.
  void add_replicas(std::vector<std::unique_ptr<Rule>> replicas);
  // How many steps may be evaluated at once: 1 without replicas.
  std::size_t replica_count() const { return replicas_.size() + 1; }
  // Evaluates a step on a free instance of the rule; any thread, up to replica_count() at once.
  StepOutcome evaluate_on_replica(const StepReady& ready);
  // What evaluate_on_replica() found, in release order: counts, events, stop actions.
  void apply(const StepReady& ready, StepOutcome outcome);

  // --- Steps read ahead (rules that keep state but read each step on its own) ---------------
  // Lets up to `steps` steps be read at once (Rule::reads_ahead) while the rule judges earlier
  // ones. Before the graph runs.
  void allow_reading_ahead(std::size_t steps) {
    steps_read_at_once_ = std::max<std::size_t>(steps, 1);
  }
  // How many steps may be read at once: 1 unless allowed more.
  std::size_t steps_read_at_once() const { return steps_read_at_once_; }
  // Reads a released step for the rule (Rule::read_ahead); null for a step out of range. Any
  // thread, up to steps_read_at_once() at once.
  std::shared_ptr<ReadAhead> read_ahead(const StepReady& ready);
  // Judges a step read ahead, in release order, on the rule's serial node: as handle() does
  // with the step, from what was read.
  void judge(const StepReady& ready, const std::shared_ptr<ReadAhead>& ahead);

  // True when no time check is queued on the node (and one now is): the caller puts it. A rule
  // busy with a backlog of steps gets one time check, not one per tick.
  bool claim_time_check() { return !time_check_queued_.exchange(true); }

  // What the rule's status says besides its counts (RuleLedger::finish makes the status): the
  // steps whose data could not be read, and why not firing is no all-clear when the rule
  // evaluated no step, or only steps holding nothing it reads.
  RuleAccount account() const;

  const RuleConfig& config() const { return config_; }
  const Rule& rule() const { return *rule_; }
  // CPU time spent evaluating steps, on every instance together.
  std::chrono::nanoseconds busy() const {
    return busy_ + std::chrono::nanoseconds(parallel_busy_.load());
  }
  // CPU time spent on the rule's serial node: every evaluation, or only applying outcomes when
  // steps are evaluated in parallel. What bounds the speedup more threads can give. Less the
  // node's thread's share of the rule's parallel sections (Rule::parallel_section_cpu): that
  // work ran on every thread of the arena.
  std::chrono::nanoseconds serial_busy() const { return serial_busy_; }

 private:
  // Evaluates `rule` (the runner's own or a replica) at a released step, from what was read
  // ahead when `ahead` is given. Touches no count: safe on different instances at once.
  StepOutcome evaluate_step(Rule& rule, const StepReady& ready, ReadAhead* ahead = nullptr) const;
  // handle() of a released step, and judge(): evaluates it on the serial node and records it.
  void run_step(const StepReady& ready, ReadAhead* ahead);
  // Runs `body` on the serial node, counting its CPU time as the node's (serial_busy_) less
  // what is not the node's own (see serial_busy()).
  template <typename Body>
  void on_serial_node(const Body& body);
  // Counts an outcome, fires its event, or puts the rule in Error (apply() and handle()).
  void record(const StepReady& ready, StepOutcome outcome);
  void check_time();
  // The rule's data could not be read at `step` (a file's format, storage): remembered for the
  // status.
  void unreadable(std::int64_t step, const std::string& reason);
  // Why the rule's silence is no all-clear (see finish()); empty when it is one.
  std::string why_not_evaluated() const;

  std::size_t index_;  // in configuration order
  RuleConfig config_;
  std::unique_ptr<Rule> rule_;
  const RuleRunnerContext& context_;
  std::int64_t steps_offered_ = 0;  // released steps in range, while not in Error
  std::int64_t unreadable_steps_ = 0;
  std::string first_unreadable_;
  std::chrono::nanoseconds busy_{};         // evaluating, on the serial node
  std::chrono::nanoseconds serial_busy_{};  // on the serial node, whatever it did
  std::atomic<std::chrono::nanoseconds::rep> parallel_busy_{0};  // evaluating on replicas
  // Instances of the rule not evaluating a step now (the runner's own is one of them).
  std::vector<std::unique_ptr<Rule>> replicas_;
  tbb::concurrent_queue<Rule*> free_instances_;
  std::size_t steps_read_at_once_ = 1;
  std::atomic<bool> time_check_queued_{false};
};

}  // namespace rulestream
