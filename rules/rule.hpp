#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/required_tensors.hpp"
#include "core/model/rule_event.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {

// Why a rule fired: the tensors and figures behind it and a sentence for a person.
struct Finding {
  std::vector<std::string> tensors;
  std::vector<Figure> figures;
  std::string message;
  // The step the finding is about, when it is not the step the rule was invoked at: a finding
  // from invoke_at_time names the last step the rule saw (nullopt: none yet).
  std::optional<std::int64_t> step;
};

// What a rule that reads ahead (Rule::reads_ahead) read at one step: its own type, derived.
class StepReading {
 public:
  virtual ~StepReading() = default;
};

// A step read ahead of its judging (Rule::read_ahead): the views it was read from, which the
// judging then sees too, and the reading, or what reading threw.
struct ReadAhead {
  std::optional<Trial> base;  // pinned; empty when waiting for the step threw
  std::vector<Trial> others;  // pinned
  std::unique_ptr<StepReading> reading;
  std::exception_ptr failure;  // from waiting for the step, or from read_step()
};

// smdebug's Rule (seed 000): subclass it, take string parameters in the constructor, and
// implement invoke_at_step. A rule is invoked at steps in increasing order, from one thread at
// a time (it may keep state between steps); different rules run in parallel.
class Rule {
 public:
  explicit Rule(Trial base_trial, std::vector<Trial> other_trials = {});
  virtual ~Rule() = default;
  Rule(const Rule&) = delete;
  Rule& operator=(const Rule&) = delete;

  // The name users write in rule_to_invoke ("VanishingGradient").
  virtual std::string_view name() const = 0;

  // True when the rule's condition is met at `step` (a global step). May throw
  // TensorUnavailableForStep or StepUnavailable when what it needs was not saved at this step
  // (invoke_rule skips the step), NoMoreData at the end.
  virtual bool invoke_at_step(std::int64_t step) = 0;

  // What the rule reads; by default, anything.
  virtual RequiredTensors required_tensors() const { return {}; }

  // Whether the rule still reads whole values (when required_tensors() says it reads them at
  // all). A rule that needs values only for a while (the first steps of a job) calls
  // done_reading_values(), and the pipeline stops keeping values for it. Any thread.
  bool reads_values() const { return !done_reading_values_.load(std::memory_order_relaxed); }

  // Rules that watch the clock (StalledTrainingRule) say how often a live pipeline should call
  // invoke_at_time; nullopt (the default): never. Replays never call it.
  virtual std::optional<std::chrono::milliseconds> check_interval() const { return std::nullopt; }

  // True when the rule's condition is met at wall-clock time `now`, with no new step (e.g. no
  // data for too long). Called from the same serial context as invoke_at_step, never at the
  // same time; report() the finding with Finding::step set to the step it concerns.
  virtual bool invoke_at_time(std::chrono::system_clock::time_point /*now*/) { return false; }

  // True when the rule's verdict and finding at a step depend only on what was saved at that
  // step: it carries nothing from one step to the next (no state, no done_reading_values(), no
  // check_interval()). A pipeline may then evaluate several steps at once, each on its own
  // instance of the rule made by the same factory with the same parameters, and put the
  // outcomes back in step order. The default, false, is always correct; a rule that says true
  // and keeps state between steps gets different answers.
  virtual bool evaluates_steps_independently() const { return false; }

  // Whether the rule says when the condition it fired for has cleared (take_cleared): its
  // incidents then resolve at that step, not after a quiet span (engine/graph/incident_book.hpp).
  // A rule that says true keeps state, so evaluates_steps_independently() is false.
  virtual bool clears_itself() const { return false; }
  // After a step's invoke, condition met or not: the series (each as a finding of the rule names
  // it first among its tensors) on which the condition it last fired for has cleared at that
  // step. Emptied by the call. Called from the serial context of invoke_at_step.
  virtual std::vector<std::string> take_cleared() { return {}; }

  // True when the configuration asks that training be stopped when the rule fires
  // (StalledTrainingRule's stop_training_on_fire): the pipeline then needs a stop action.
  virtual bool stops_training_on_fire() const { return false; }

  // Whether the rule was given trials to compare with: each invocation then looks at them too
  // (a pipeline lets such a rule's steps through once they are loaded).
  bool compares_with_other_trials() const { return !other_trials_.empty(); }

  // smdebug's Rule.invoke: waits for the step, evaluates it on a pinned (unchanging) view of
  // the trials, and throws RuleEvaluationConditionMet when the condition is met.
  void invoke(std::int64_t step);

  // invoke_at_time on a pinned view of the trials; true when the condition is met (the
  // finding is then last_finding()).
  bool invoke_at(std::chrono::system_clock::time_point now);

  // What made the last condition-met invocation fire (filled through report()).
  const Finding& last_finding() const { return finding_; }

  // CPU time the calling thread has spent inside rules' parallel sections
  // (for_ranges_in_parallel), its own share of work spread over the arena's threads. A
  // pipeline subtracts what a rule's serial node's thread spent there from the node's busy
  // time, as it subtracts the store's parallel ingestion from the assembler's: that work is not
  // serial. Counted per thread: a rule that reads ahead runs parallel sections on other threads
  // while its serial node runs, and those are not the node's to subtract.
  static std::chrono::nanoseconds parallel_section_cpu();

  // --- Reading ahead (rules that keep state, but read each step on its own) ----------------
  // A rule that reads ahead splits its evaluation in two: read_step() gathers what it needs at
  // a step from the trial alone (the slow part: listings, lookups, reductions), and
  // invoke_at_step() judges it against the rule's state, in step order. A pipeline may then
  // read several steps at once on other threads while the rule's own thread judges earlier
  // ones: only the judging is serial. The outcome is the serial form's by construction, since
  // invoke_at_step asks for its reading (reading()) in both forms, and it is read from the same
  // pinned view the judging then sees.
  //
  // The contract of a rule that says true: read_step() reads only `trial` and the rule's
  // parameters, nothing invoke_at_step() writes (nor base_trial(), which the judging thread
  // sets); it may run on any thread, on several steps at once, and while invoke_at_step() runs
  // for an earlier step. The rule watches no clock.
  virtual bool reads_ahead() const { return false; }
  // What a rule that reads ahead read at `step` from `trial` (a pinned view); may throw what
  // invoke_at_step would (TensorUnavailableForStep, a FormatError). The default reads nothing.
  virtual std::unique_ptr<StepReading> read_step(const Trial& trial, std::int64_t step) const;
  // For a pipeline, on any thread: waits for the step as invoke() does, pins the views and reads
  // the step. Never throws: what went wrong is kept and thrown by invoke_with() where the
  // serial form would have thrown it.
  ReadAhead read_ahead(std::int64_t step) const;
  // invoke(step) with the step read ahead: the judging sees the views the reading was made from.
  void invoke_with(std::int64_t step, ReadAhead ahead);

 protected:
  // The trials as this invocation sees them (pinned during invoke()).
  const Trial& base_trial() const { return current_base_ ? *current_base_ : base_trial_; }
  const std::vector<Trial>& other_trials() const {
    return current_others_.empty() ? other_trials_ : current_others_;
  }

  // From invoke_at_step of a rule that reads ahead, first: this step's reading, as read ahead
  // on another thread (rethrowing what that reading threw), or read now from base_trial().
  std::unique_ptr<StepReading> reading(std::int64_t step);

  // Records why the rule fires at this step; call before returning true.
  void report(Finding finding) { finding_ = std::move(finding); }

  // From invoke_at_step: this rule will not read whole values again (see reads_values()).
  void done_reading_values() { done_reading_values_.store(true, std::memory_order_relaxed); }

  // From invoke_at_step: body(begin, end) over ranges covering [0, count), at most `grain`
  // items each, on as many threads of the current arena as are free, in no particular order;
  // returns when every range is done. Isolated: a thread waiting for the ranges takes no
  // unrelated work (another step of this or another rule, which could wait on this one). For
  // per-tensor work that depends on one tensor alone; the rule then judges the results in order
  // as one thread would. With count <= grain the body runs once on this thread and counts as
  // the rule's own serial work. An exception from a range is rethrown here (oneTBB cancels the
  // other ranges). Not for a body that waits on the graph.
  void for_ranges_in_parallel(std::size_t count, std::size_t grain,
                              const std::function<void(std::size_t, std::size_t)>& body) const;

 private:
  Trial base_trial_;
  std::vector<Trial> other_trials_;
  std::optional<Trial> current_base_;
  std::vector<Trial> current_others_;
  Finding finding_;
  std::atomic<bool> done_reading_values_{false};
  // The reading invoke_with() was given, until invoke_at_step takes it (reading()).
  std::unique_ptr<StepReading> ahead_reading_;
  std::exception_ptr ahead_failure_;
  bool read_ahead_ = false;
};

// smdebug's invoke_rule: invokes `rule` at start_step, start_step + 1, ... until end_step
// (exclusive) or, when end_step is nullopt, until the job's data runs out (NoMoreData).
// Steps where data is missing (TensorUnavailableForStep, StepUnavailable) are skipped; a met
// condition is recorded and evaluation goes on, unless raise_eval_cond, when it is thrown.
struct InvokeResult {
  std::vector<std::int64_t> triggered_steps;
  std::int64_t steps_evaluated = 0;  // steps whose condition was evaluated (met or not)
};
InvokeResult invoke_rule(Rule& rule, std::int64_t start_step = 0,
                         std::optional<std::int64_t> end_step = std::nullopt,
                         bool raise_eval_cond = false);

}  // namespace rulestream
