#pragma once

// The ledger of a job's rule outcomes, whatever the job's format. Every rule run (the smdebug
// pipeline's RuleRunner, the TensorBoard pipeline's series evaluation, a clock's silence and
// time checks) hands what it found here, and only here:
// - a condition met becomes a rule event, named for the trial and the rule, sent to the rule's
//   sinks (SinkRouting); a sink that throws is reported and counted, never fatal, and the other
//   sinks still get the event;
// - a rule's firings are grouped into incidents (IncidentBook): each firing says which incident
//   it opens or updates, and an incident's resolution is an event of its own, sent when the rule
//   says its condition cleared (clear()), after a quiet span, or at the end, before the statuses;
// - the first time a rule fires, its stop actions run (once, whatever fires after);
// - evaluations and firings are counted per rule;
// - at the end, each rule's status is made by one set of reasons, in this order: Error when the
//   rule failed (it threw, it cannot run on this format); IssuesFound when it fired; Error when
//   its silence is no all-clear (its data could not be read, it had nothing to evaluate, the
//   job could not be read to its end); NoIssuesFound otherwise. The status goes to the rule's
//   sinks too, and then every sink is flushed.
//
// Concurrency: the calls for one rule come from one thread at a time (its serial node, or the
// caller's lock); calls for different rules may run at once (each rule's counts are its own,
// the sinks and the stop action runner are thread-safe). Counts may be read from any thread at
// any time. finish() runs once, after every rule's last call.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/model/mode.hpp"
#include "core/model/rule_event.hpp"
#include "engine/graph/incident_book.hpp"
#include "engine/graph/sink_routing.hpp"
#include "engine/graph/stop_action.hpp"
#include "rules/rule.hpp"
#include "sinks/sink.hpp"

namespace rulestream {

// One configured rule, as the ledger names it.
struct LedgerRule {
  std::string configuration_name;
  std::string rule;  // the rule's name in events and statuses ("VanishingGradient")
  // What runs the first time the rule fires (stop_actions_for: its own, or the defaults for a
  // rule that asks to stop training).
  std::vector<StopAction> stop_actions;
  // A rule of the default set (RuleConfig::only_where_applicable): nothing to evaluate makes it
  // NotApplicable rather than Error.
  bool only_where_applicable = false;
  // How its firings group into incidents (RuleConfig::incidents), and whether the rule says when
  // its condition clears (a series rule that does: SeriesRule::clears_itself).
  IncidentPolicy incidents;
  bool clears_itself = false;
};

// How the reading of the job ended, which every rule's status says.
struct JobEnding {
  // What failed before the job was read to its end (a listing refused, storage gone), naming
  // the storage; empty when nothing did.
  std::string source_failure;
  // Stopped (request_stop) before every file was read; `unread` says what was left ("12 index
  // files unread"), when known.
  bool interrupted = false;
  std::string unread;

  bool read_to_the_end() const { return source_failure.empty() && !interrupted; }
  // What a status says first about the ending; empty for a job read to its end.
  std::string describe() const;
};

// What a rule run says of one rule at the end, besides its counts.
struct RuleAccount {
  std::string caveat;      // said whatever the status (steps whose data could not be read)
  std::string why_silent;  // why not firing is no all-clear; empty when it is one
  bool nothing_to_evaluate = false;  // why_silent is that the data has none of its inputs
};

// The statuses and totals finish() made.
struct LedgerSummary {
  std::vector<RuleEvent> statuses;  // one per rule, in configuration order
  std::int64_t conditions_met = 0;
  bool rule_errors = false;  // some rule ended in Error
};

class RuleLedger {
 public:
  // Where the ledger reports what went wrong outside a rule's own logic (a sink that threw, a
  // stop action that failed): a file's path when there is one, and a line. Thread-safe.
  using ProblemReporter = std::function<void(std::string path, std::string message)>;

  // `sinks` and `routing` outlive the ledger; `routing` knows `rules` in the same order.
  RuleLedger(std::vector<LedgerRule> rules, const std::vector<std::unique_ptr<Sink>>& sinks,
             const SinkRouting& routing, ProblemReporter report_problem);
  ~RuleLedger();
  RuleLedger(const RuleLedger&) = delete;
  RuleLedger& operator=(const RuleLedger&) = delete;

  // The trial every event names. Before the first event (a format may learn the name only once
  // it opens its storage).
  void name_trial(std::string trial) { trial_ = std::move(trial); }
  const std::string& trial() const { return trial_; }

  std::size_t size() const { return slots_.size(); }
  const LedgerRule& rule(std::size_t rule) const { return slots_[rule].rule; }

  // --- While the job runs (see the concurrency contract above) -------------------------------
  // `count` more evaluations of the rule (steps, or values of a series).
  void evaluated(std::size_t rule, std::int64_t count = 1);
  // The rule is in Error from now on, for `reason`; the first reason is the one kept.
  void fail(std::size_t rule, std::string reason);
  bool failed(std::size_t rule) const { return slots_[rule].failed; }
  // A condition met: the event, where and why (global_step, mode, mode_step, tensors, figures,
  // message), is completed with its kind, time, trial and rule names, sent to the rule's sinks
  // and counted; the rule's stop actions run if this is its first firing.
  void fire(std::size_t rule, RuleEvent event);
  // The rule's condition cleared on `series` (a finding's first tensor) at `step`: its open
  // incident there, if any, is resolved, and the resolution sent.
  void clear(std::size_t rule, const std::string& series, std::int64_t step);

  // A finding at a step as an event (where and why), for fire().
  static RuleEvent condition(Finding finding, std::int64_t step, Mode mode, std::int64_t mode_step);

  // --- Counts, from any thread ---------------------------------------------------------------
  std::int64_t evaluations(std::size_t rule) const { return slots_[rule].evaluated.load(); }
  std::int64_t fired(std::size_t rule) const { return slots_[rule].fired.load(); }
  // Events (conditions met and statuses) some sink threw on.
  std::int64_t sink_failures() const { return sink_failures_.load(); }

  // --- Once, at the end ----------------------------------------------------------------------
  // Waits (kStopCommandWait at most) for the stop commands started to say how they ended, makes
  // each rule's status (see the order above; `account(i)` is rule i's account), sends it to the
  // rule's sinks, and flushes every sink.
  LedgerSummary finish(const JobEnding& ending,
                       const std::function<RuleAccount(std::size_t rule)>& account);

 private:
  // One rule's entries. Aligned apart: rules on different threads count without sharing a
  // cache line.
  struct alignas(64) Slot {
    LedgerRule rule;
    std::atomic<std::int64_t> evaluated{0};
    std::atomic<std::int64_t> fired{0};
    bool failed = false;
    std::string failure;
    bool stop_ran = false;
    std::unique_ptr<IncidentBook> incidents;
  };

  // The event named for the job and the rule, and stamped with the time.
  void stamp(const Slot& slot, RuleEvent& event) const;

  // To the rule's sinks; a sink that throws is reported and counted.
  void send(std::size_t rule, const RuleEvent& event);

  std::string trial_;
  std::vector<Slot> slots_;
  const std::vector<std::unique_ptr<Sink>>& sinks_;
  const SinkRouting& routing_;
  ProblemReporter report_problem_;
  std::atomic<std::int64_t> sink_failures_{0};
  // Last: destroyed first, while what its failure callback reports to is still there.
  StopActionRunner stopper_;
};

}  // namespace rulestream
