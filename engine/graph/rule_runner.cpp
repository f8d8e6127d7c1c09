#include "engine/graph/rule_runner.hpp"

#include <optional>

#include "core/memory/reader_slots_mutex.hpp"
#include "core/model/busy_timer.hpp"
#include "core/model/exceptions.hpp"

namespace rulestream {
namespace {

// What `required` names, for a status: "collections gradients; regexes .*relu_input".
std::string describe(const RequiredTensors& required) {
  std::string text;
  const auto list = [&](const char* what, const std::vector<std::string>& items) {
    if (items.empty()) return;
    if (!text.empty()) text += "; ";
    text += what;
    for (std::size_t i = 0; i < items.size(); ++i) text += (i == 0 ? " " : ", ") + items[i];
  };
  list("tensors", required.names);
  list("regexes", required.regexes);
  list("collections", required.collections);
  return text.empty() ? "any tensor" : text;
}

// True when the trial holds a tensor the rule reads (a rule that reads none always does).
bool holds_any(const Trial& trial, const RequiredTensors& required) {
  if (required.nothing) return true;
  if (required.empty()) return !trial.tensor_names().empty();
  for (const std::string& name : required.names) {
    if (trial.has_tensor(name)) return true;
  }
  if (!required.regexes.empty() && !trial.tensor_names({.regex = required.regexes}).empty()) {
    return true;
  }
  for (const std::string& collection : required.collections) {
    if (!trial.collections().contains(collection)) continue;
    if (!trial.tensor_names({.collection = collection}).empty()) return true;
  }
  return false;
}

}  // namespace

RuleRunner::RuleRunner(std::size_t index, ConfiguredRule configured,
                       const RuleRunnerContext& context)
    : index_(index),
      config_(std::move(configured.config)),
      rule_(std::move(configured.rule)),
      context_(context) {}

void RuleRunner::handle(const RuleMessage& message) {
  if (const auto* ready = std::get_if<StepReady>(&message)) {
    run_step(*ready, nullptr);
  } else {
    on_serial_node([&] { check_time(); });
  }
}

template <typename Body>
void RuleRunner::on_serial_node(const Body& body) {
  // What this thread did of rules' parallel sections ran on every thread of the arena: it is
  // the rule's work, not its serial node's. Nor is what it did of the store's ingestion while a
  // lookup waited for the store's lock (ReaderSlotsMutex::helped_cpu): that is the assembler's
  // parallel work, and the rule's neither. Both are counted per thread, so a rule reading ahead
  // on other threads meanwhile changes neither figure here.
  const auto parallel_before = Rule::parallel_section_cpu();
  const auto helped_before = ReaderSlotsMutex::helped_cpu();
  {
    BusyTimer serial(serial_busy_);
    body();
  }
  serial_busy_ -= Rule::parallel_section_cpu() - parallel_before;
  serial_busy_ -= ReaderSlotsMutex::helped_cpu() - helped_before;
}

void RuleRunner::run_step(const StepReady& ready, ReadAhead* ahead) {
  on_serial_node([&] {
    if (context_.ledger->failed(index_) || !context_.in_range(ready.step)) return;
    const auto helped_before = ReaderSlotsMutex::helped_cpu();
    StepOutcome outcome;
    {
      BusyTimer timer(busy_);
      outcome = evaluate_step(*rule_, ready, ahead);
    }
    busy_ -= ReaderSlotsMutex::helped_cpu() - helped_before;
    record(ready, std::move(outcome));
  });
}

std::shared_ptr<ReadAhead> RuleRunner::read_ahead(const StepReady& ready) {
  if (!context_.in_range(ready.step)) return nullptr;
  const auto start = BusyTimer::now();
  auto ahead = std::make_shared<ReadAhead>(rule_->read_ahead(ready.step));
  parallel_busy_ += (BusyTimer::now() - start).count();
  return ahead;
}

void RuleRunner::judge(const StepReady& ready, const std::shared_ptr<ReadAhead>& ahead) {
  if (!ahead) return;  // out of range: nothing was read, and the serial form evaluates nothing
  run_step(ready, ahead.get());
}

void RuleRunner::add_replicas(std::vector<std::unique_ptr<Rule>> replicas) {
  for (auto& replica : replicas) {
    free_instances_.push(replica.get());
    replicas_.push_back(std::move(replica));
  }
  if (!replicas_.empty()) free_instances_.push(rule_.get());
}

StepOutcome RuleRunner::evaluate_on_replica(const StepReady& ready) {
  if (!context_.in_range(ready.step)) return {};
  Rule* instance = nullptr;
  // The node calling this runs at most replica_count() bodies at once, so one is always free.
  if (replicas_.empty()) {
    instance = rule_.get();
  } else if (!free_instances_.try_pop(instance)) {
    return {.kind = StepOutcome::Kind::Failed,
            .finding = {},
            .reason = "internal error: more steps evaluated at once than the rule has instances",
            .path = {}};
  }
  struct Return {  // the instance goes back however the evaluation ends
    RuleRunner& runner;
    Rule* instance;
    std::chrono::nanoseconds start = BusyTimer::now();
    ~Return() {
      runner.parallel_busy_ += (BusyTimer::now() - start).count();
      if (!runner.replicas_.empty()) runner.free_instances_.push(instance);
    }
  } give_back{*this, instance};
  return evaluate_step(*instance, ready);
}

StepOutcome RuleRunner::evaluate_step(Rule& rule, const StepReady& ready, ReadAhead* ahead) const {
  using Kind = StepOutcome::Kind;
  if (!context_.in_range(ready.step)) return {};
  StepOutcome outcome;
  try {
    if (ahead != nullptr) {
      rule.invoke_with(ready.step, std::move(*ahead));
    } else {
      rule.invoke(ready.step);
    }
    outcome.kind = Kind::Quiet;
  } catch (const RuleEvaluationConditionMet&) {
    outcome.kind = Kind::Fired;
    outcome.finding = rule.last_finding();
  } catch (const TensorUnavailableForStep&) {
    // What this rule reads was not saved at this step: smdebug skips the step too.
    outcome.kind = Kind::Skipped;
  } catch (const TensorUnavailable&) {
    outcome.kind = Kind::Skipped;
  } catch (const StepUnavailable&) {
    outcome.kind = Kind::Skipped;
  } catch (const StepNotYetAvailable&) {
    outcome.kind = Kind::Skipped;
  } catch (const NoMoreData&) {
    outcome.kind = Kind::Skipped;
  } catch (const FormatError& error) {
    outcome.kind = Kind::Unreadable;
    outcome.reason = error.what();
    outcome.path = error.where();
  } catch (const StorageError& error) {
    outcome.kind = Kind::Unreadable;
    outcome.reason = error.what();
  } catch (const std::exception& error) {
    outcome.kind = Kind::Failed;
    outcome.reason = error.what();
  }
  if (outcome.kind == Kind::Quiet || outcome.kind == Kind::Fired)
    outcome.cleared = rule.take_cleared();
  return outcome;
}

void RuleRunner::apply(const StepReady& ready, StepOutcome outcome) {
  BusyTimer serial(serial_busy_);
  record(ready, std::move(outcome));
}

void RuleRunner::record(const StepReady& ready, StepOutcome outcome) {
  using Kind = StepOutcome::Kind;
  // After an error the rule is done: outcomes of later steps evaluated in parallel are dropped,
  // as a serial runner would not have evaluated them.
  RuleLedger& ledger = *context_.ledger;
  if (ledger.failed(index_) || outcome.kind == Kind::OutOfRange) return;
  steps_offered_++;
  switch (outcome.kind) {
    case Kind::OutOfRange:
    case Kind::Skipped:
      return;
    case Kind::Quiet:
      ledger.evaluated(index_);
      for (const std::string& series : outcome.cleared) ledger.clear(index_, series, ready.step);
      return;
    case Kind::Fired: {
      ledger.evaluated(index_);
      RuleEvent event = RuleLedger::condition(std::move(outcome.finding), ready.step, ready.mode,
                                              ready.mode_step);
      if (event.message.empty()) {
        event.message =
            std::string(rule_->name()) + " condition met at step " + std::to_string(ready.step);
      }
      if (ready.incomplete) event.message += " (not every worker had written this step)";
      ledger.fire(index_, std::move(event));
      for (const std::string& series : outcome.cleared) ledger.clear(index_, series, ready.step);
      return;
    }
    case Kind::Unreadable:
      unreadable(ready.step, outcome.reason);
      context_.report_problem(outcome.path, "rule " + config_.configuration_name + " at step " +
                                                std::to_string(ready.step) + ": " + outcome.reason);
      return;
    case Kind::Failed:
      ledger.fail(index_, "at step " + std::to_string(ready.step) + ": " + outcome.reason);
      return;
  }
}

// A time check runs on the rule's own node, between its steps. Once the job has written its end
// marker, silence is the end of training, not a stall.
void RuleRunner::check_time() {
  time_check_queued_ = false;
  RuleLedger& ledger = *context_.ledger;
  if (ledger.failed(index_) || *context_.end_marker_seen) return;
  try {
    if (!rule_->invoke_at(std::chrono::system_clock::now())) return;
    const Finding& finding = rule_->last_finding();
    const Trial& base = *context_.base;
    // The step the finding names (the last one seen), or -1 before any.
    const std::optional<std::int64_t> step = finding.step;
    RuleEvent event = RuleLedger::condition(
        finding, step.value_or(-1), step ? base.mode(*step).value_or(Mode::Global) : Mode::Global,
        step ? base.mode_step(*step).value_or(*step) : std::int64_t{-1});
    if (event.message.empty()) {
      event.message = std::string(rule_->name()) + " condition met with no new step";
    }
    ledger.fire(index_, std::move(event));
  } catch (const std::exception& error) {
    ledger.fail(index_, std::string("checking the time: ") + error.what());
  }
}

void RuleRunner::unreadable(std::int64_t step, const std::string& reason) {
  if (unreadable_steps_++ == 0) first_unreadable_ = "step " + std::to_string(step) + ": " + reason;
}

std::string RuleRunner::why_not_evaluated() const {
  if (unreadable_steps_ > 0) {
    return "could not read its data at " + std::to_string(unreadable_steps_) + " of " +
           std::to_string(steps_offered_) + " steps (first, " + first_unreadable_ + ")";
  }
  if (const std::int64_t evaluated = context_.ledger->evaluations(index_); evaluated > 0) {
    // Steps went through a rule that found nothing it reads in them: silence, not health.
    const RequiredTensors required = rule_->required_tensors();
    if (holds_any(*context_.base, required)) return "";
    return "evaluated " + std::to_string(evaluated) +
           " steps, but the job saved no tensor it reads (" + describe(required) + ")";
  }
  if (steps_offered_ == 0) return "evaluated no step: no step of the job was read";
  return "evaluated no step: what it reads was not saved at any of the " +
         std::to_string(steps_offered_) + " steps read";
}

RuleAccount RuleRunner::account() const {
  // Steps it could not read are said whatever the status: findings cover only the steps it
  // could read.
  std::string why = why_not_evaluated();
  return {.caveat = unreadable_steps_ > 0 ? why : std::string(), .why_silent = std::move(why)};
}

}  // namespace rulestream
