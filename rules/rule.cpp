#include "rules/rule.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <utility>

#include "core/model/busy_timer.hpp"
#include "core/model/exceptions.hpp"

namespace rulestream {
namespace {

// This thread's CPU time inside rules' parallel sections (Rule::parallel_section_cpu).
thread_local std::chrono::nanoseconds parallel_section_total{0};
// How many of them this thread is inside (a range's body may start another).
thread_local int parallel_section_depth = 0;

// Installs the pinned views for one invocation and removes them however it ends, so that a
// rule that threw never keeps a stale view into its next step (or into base_trial() callers
// outside invoke()).
class PinnedViews {
 public:
  PinnedViews(std::optional<Trial>& base, std::vector<Trial>& others, Trial pinned_base,
              std::vector<Trial> pinned_others)
      : base_(base), others_(others) {
    base_ = std::move(pinned_base);
    others_ = std::move(pinned_others);
  }
  ~PinnedViews() {
    base_.reset();
    others_.clear();
  }
  PinnedViews(const PinnedViews&) = delete;
  PinnedViews& operator=(const PinnedViews&) = delete;

 private:
  std::optional<Trial>& base_;
  std::vector<Trial>& others_;
};

std::vector<Trial> pinned(const std::vector<Trial>& trials) {
  std::vector<Trial> views;
  views.reserve(trials.size());
  for (const Trial& trial : trials) views.push_back(trial.pinned());
  return views;
}

// The trials compared with, pinned for an invocation at global `step`: each refreshed only while
// it has not passed the step (Trial::pinned_for_step), as smdebug refreshes one on a miss. The
// pipeline pins them at every step of every rule that compares, from as many threads as it
// evaluates steps on.
std::vector<Trial> pinned_for_step(const std::vector<Trial>& trials, std::int64_t step) {
  std::vector<Trial> views;
  views.reserve(trials.size());
  for (const Trial& trial : trials) views.push_back(trial.pinned_for_step(step));
  return views;
}

}  // namespace

Rule::Rule(Trial base_trial, std::vector<Trial> other_trials)
    : base_trial_(std::move(base_trial)), other_trials_(std::move(other_trials)) {}

void Rule::for_ranges_in_parallel(std::size_t count, std::size_t grain,
                                  const std::function<void(std::size_t, std::size_t)>& body) const {
  grain = std::max<std::size_t>(grain, 1);
  if (count <= grain) {
    if (count > 0) body(0, count);
    return;
  }
  // Only the outermost section on this thread counts (one nested in a range would be counted
  // twice), and not what this thread ran of the store's ingestion meanwhile, waiting for its lock:
  // that is counted as such (thread_cpu_lent), and a serial node subtracts both.
  const bool outermost = parallel_section_depth++ == 0;
  const auto lent_before = thread_cpu_lent();
  std::chrono::nanoseconds caller_cpu{};
  try {
    BusyTimer busy(caller_cpu);
    tbb::this_task_arena::isolate([&] {
      // simple_partitioner: ranges of at most `grain`, as the caller sized them (a range of
      // small tensors must hold enough values to be worth a task).
      tbb::parallel_for(
          tbb::blocked_range<std::size_t>(0, count, grain),
          [&](const tbb::blocked_range<std::size_t>& range) { body(range.begin(), range.end()); },
          tbb::simple_partitioner());
    });
  } catch (...) {
    parallel_section_depth--;
    throw;
  }
  parallel_section_depth--;
  if (outermost) {
    parallel_section_total += caller_cpu - (thread_cpu_lent() - lent_before);
  }
}

std::chrono::nanoseconds Rule::parallel_section_cpu() {
  return parallel_section_total;
}

void Rule::invoke(std::int64_t step) {
  // As smdebug: only the base trial is waited for; other trials are not compared step by step.
  // On an ended trial this throws StepUnavailable for a step that was never saved and
  // NoMoreData past the last one; invoke_rule decides what they mean.
  base_trial_.wait_for_steps({step});

  bool condition_met = false;
  {
    // smdebug evaluates under no_refresh: the step numbers and tensors the rule sees cannot
    // change while it runs, however long that takes on a live trial. The base trial has the step
    // (waited for above): it is pinned as it is.
    const PinnedViews views(current_base_, current_others_, base_trial_.pinned_as_it_is(),
                            pinned_for_step(other_trials_, step));
    finding_ = Finding{};
    condition_met = invoke_at_step(step);
  }
  if (condition_met) throw RuleEvaluationConditionMet(std::string(name()), step);
}

std::unique_ptr<StepReading> Rule::read_step(const Trial& /*trial*/, std::int64_t /*step*/) const {
  return nullptr;
}

ReadAhead Rule::read_ahead(std::int64_t step) const {
  ReadAhead ahead;
  try {
    base_trial_.wait_for_steps({step});  // as invoke(step)
    // Counted apart from the rule's other handles: several steps are read at once.
    ahead.base = base_trial_.pinned_as_it_is().separately_counted();
    ahead.others = pinned_for_step(other_trials_, step);
    ahead.reading = read_step(*ahead.base, step);
  } catch (...) {
    ahead.failure = std::current_exception();
  }
  return ahead;
}

void Rule::invoke_with(std::int64_t step, ReadAhead ahead) {
  // Waiting for the step threw: as invoke(step) would have, before any view was pinned.
  if (!ahead.base) std::rethrow_exception(ahead.failure);
  bool condition_met = false;
  {
    const PinnedViews views(current_base_, current_others_, std::move(*ahead.base),
                            std::move(ahead.others));
    struct Given {  // the reading is this invocation's only, however it ends
      Rule& rule;
      ~Given() {
        rule.read_ahead_ = false;
        rule.ahead_reading_.reset();
        rule.ahead_failure_ = nullptr;
      }
    } given{*this};
    read_ahead_ = true;
    ahead_reading_ = std::move(ahead.reading);
    ahead_failure_ = ahead.failure;
    finding_ = Finding{};
    condition_met = invoke_at_step(step);
  }
  if (condition_met) throw RuleEvaluationConditionMet(std::string(name()), step);
}

std::unique_ptr<StepReading> Rule::reading(std::int64_t step) {
  if (!read_ahead_) return read_step(base_trial(), step);
  read_ahead_ = false;
  if (ahead_failure_) std::rethrow_exception(std::exchange(ahead_failure_, nullptr));
  return std::move(ahead_reading_);
}

bool Rule::invoke_at(std::chrono::system_clock::time_point now) {
  const PinnedViews views(current_base_, current_others_, base_trial_.pinned(),
                          pinned(other_trials_));
  finding_ = Finding{};
  return invoke_at_time(now);
}

InvokeResult invoke_rule(Rule& rule, std::int64_t start_step, std::optional<std::int64_t> end_step,
                         bool raise_eval_cond) {
  InvokeResult result;
  for (std::int64_t step = start_step; !end_step || step < *end_step; ++step) {
    try {
      rule.invoke(step);
      ++result.steps_evaluated;
    } catch (const TensorUnavailableForStep&) {
      // Data the rule needs was not saved at this step: nothing to evaluate, as in smdebug.
    } catch (const StepUnavailable&) {
    } catch (const TensorUnavailable&) {
    } catch (const RuleEvaluationConditionMet& met) {
      ++result.steps_evaluated;
      result.triggered_steps.push_back(met.step());
      if (raise_eval_cond) throw;
      if (met.end_of_rule()) break;
    } catch (const NoMoreData&) {
      // The job ended before this step: the normal end of an unbounded evaluation.
      break;
    }
  }
  return result;
}

}  // namespace rulestream
