#include "pipeline/graph/rule_runner.hpp"

#include "pipeline/model/exceptions.hpp"

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
      stop_actions_(std::move(configured.stop_actions)),
      context_(context) {}

void RuleRunner::handle(const RuleMessage& message) {
  if (const auto* ready = std::get_if<StepReady>(&message)) {
    evaluate(*ready);
  } else {
    check_time();
  }
}

void RuleRunner::evaluate(const StepReady& ready) {
  if (errored_ || !context_.in_range(ready.step)) return;
  steps_offered_++;
  struct BusyTimer {
    std::chrono::steady_clock::duration& busy;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    ~BusyTimer() { busy += std::chrono::steady_clock::now() - start; }
  } timer{busy_};
  try {
    rule_->invoke(ready.step);
    evaluated_++;
  } catch (const RuleEvaluationConditionMet&) {
    evaluated_++;
    const Finding& finding = rule_->last_finding();
    RuleEvent event;
    event.global_step = ready.step;
    event.mode = ready.mode;
    event.mode_step = ready.mode_step;
    event.tensors = finding.tensors;
    event.figures = finding.figures;
    event.message =
        finding.message.empty()
            ? std::string(rule_->name()) + " condition met at step " + std::to_string(ready.step)
            : finding.message;
    if (ready.incomplete) event.message += " (not every worker had written this step)";
    fire(std::move(event));
  } catch (const TensorUnavailableForStep&) {
    // What this rule reads was not saved at this step: smdebug skips the step too.
  } catch (const TensorUnavailable&) {
  } catch (const StepUnavailable&) {
  } catch (const StepNotYetAvailable&) {
  } catch (const NoMoreData&) {
  } catch (const FormatError& error) {
    unreadable(ready.step, error.what());
    context_.report_problem(error.where(), "rule " + config_.configuration_name + " at step " +
                                               std::to_string(ready.step) + ": " + error.what());
  } catch (const StorageError& error) {
    unreadable(ready.step, error.what());
    context_.report_problem("", "rule " + config_.configuration_name + " at step " +
                                    std::to_string(ready.step) + ": " + error.what());
  } catch (const std::exception& error) {
    errored_ = true;
    error_ = "at step " + std::to_string(ready.step) + ": " + error.what();
  }
}

// A time check runs on the rule's own node, between its steps. Once the job has written its end
// marker, silence is the end of training, not a stall.
void RuleRunner::check_time() {
  time_check_queued_ = false;
  if (errored_ || *context_.end_marker_seen) return;
  try {
    if (!rule_->invoke_at(std::chrono::system_clock::now())) return;
    const Finding& finding = rule_->last_finding();
    const Trial& base = *context_.base;
    RuleEvent event;
    // The step the finding names (the last one seen), or -1 before any.
    event.global_step = finding.step.value_or(-1);
    event.mode = finding.step ? base.mode(*finding.step).value_or(Mode::Global) : Mode::Global;
    event.mode_step =
        finding.step ? base.mode_step(*finding.step).value_or(*finding.step) : std::int64_t{-1};
    event.tensors = finding.tensors;
    event.figures = finding.figures;
    event.message = finding.message.empty()
                        ? std::string(rule_->name()) + " condition met with no new step"
                        : finding.message;
    fire(std::move(event));
  } catch (const std::exception& error) {
    errored_ = true;
    error_ = std::string("checking the time: ") + error.what();
  }
}

void RuleRunner::fire(RuleEvent event) {
  fired_++;
  event.kind = RuleEvent::Kind::ConditionMet;
  event.time = std::chrono::system_clock::now();
  event.trial = context_.base->name();
  event.rule_configuration = config_.configuration_name;
  event.rule = std::string(rule_->name());
  dispatch(event);
  if (stop_ran_ || stop_actions_.empty()) return;
  stop_ran_ = true;
  const StopRequest request{event.rule_configuration, event.rule, event.trial, event.global_step};
  for (const auto& action : stop_actions_) context_.stopper->run(action, request);
}

void RuleRunner::dispatch(const RuleEvent& event) const {
  for (const std::size_t i : context_.routing->sinks_of(index_)) {
    const auto& sink = (*context_.sinks)[i];
    try {
      sink->write(event);
    } catch (const std::exception& error) {
      context_.report_problem("", sink->describe() + ": " + error.what());
    }
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
  if (evaluated_ > 0) {
    // Steps went through a rule that found nothing it reads in them: silence, not health.
    const RequiredTensors required = rule_->required_tensors();
    if (holds_any(*context_.base, required)) return "";
    return "evaluated " + std::to_string(evaluated_) +
           " steps, but the job saved no tensor it reads (" + describe(required) + ")";
  }
  if (steps_offered_ == 0) return "evaluated no step: no step of the job was read";
  return "evaluated no step: what it reads was not saved at any of the " +
         std::to_string(steps_offered_) + " steps read";
}

RuleEvent RuleRunner::finish(const std::string& before, const std::vector<std::string>& after,
                             bool read_whole_job) const {
  RuleEvent status;
  status.kind = RuleEvent::Kind::Status;
  status.time = std::chrono::system_clock::now();
  status.trial = context_.base->name();
  status.rule_configuration = config_.configuration_name;
  status.rule = std::string(rule_->name());
  status.steps_evaluated = evaluated_;
  status.times_fired = fired_;
  if (errored_) {
    status.status = RuleStatus::Error;
    status.message = error_;
  } else if (fired_ > 0) {
    status.status = RuleStatus::IssuesFound;
  } else if (const std::string why = why_not_evaluated(); !why.empty()) {
    // Not firing on data that was never read, or on no step at all, is not "no issues".
    status.status = RuleStatus::Error;
    status.message = why;
  } else if (!read_whole_job) {
    status.status = RuleStatus::Error;  // `before` says why
  } else {
    status.status = RuleStatus::NoIssuesFound;
  }
  if (!before.empty()) {
    status.message = before + (status.message.empty() ? "" : "; " + status.message);
  }
  for (const std::string& note : after) {
    status.message += (status.message.empty() ? "" : "; ") + note;
  }
  dispatch(status);
  return status;
}

}  // namespace rulestream
