#include "engine/graph/rule_ledger.hpp"

#include <chrono>

namespace rulestream {

std::string JobEnding::describe() const {
  if (!source_failure.empty()) return "the job could not be read to the end: " + source_failure;
  if (interrupted) {
    return "interrupted: not read to the end" + (unread.empty() ? "" : " (" + unread + ")");
  }
  return "";
}

RuleLedger::RuleLedger(std::vector<LedgerRule> rules,
                       const std::vector<std::unique_ptr<Sink>>& sinks, const SinkRouting& routing,
                       ProblemReporter report_problem)
    : slots_(rules.size()),
      sinks_(sinks),
      routing_(routing),
      report_problem_(std::move(report_problem)),
      stopper_([this](const std::string& line) { report_problem_("", line); }) {
  for (std::size_t i = 0; i < rules.size(); ++i) {
    slots_[i].rule = std::move(rules[i]);
    slots_[i].incidents =
        std::make_unique<IncidentBook>(slots_[i].rule.configuration_name, slots_[i].rule.rule,
                                       slots_[i].rule.incidents, slots_[i].rule.clears_itself);
  }
}

RuleLedger::~RuleLedger() = default;

void RuleLedger::evaluated(std::size_t rule, std::int64_t count) {
  slots_[rule].evaluated.fetch_add(count, std::memory_order_relaxed);
}

void RuleLedger::fail(std::size_t rule, std::string reason) {
  Slot& slot = slots_[rule];
  if (slot.failed) return;
  slot.failed = true;
  slot.failure = std::move(reason);
}

RuleEvent RuleLedger::condition(Finding finding, std::int64_t step, Mode mode,
                                std::int64_t mode_step) {
  RuleEvent event;
  event.global_step = step;
  event.mode = mode;
  event.mode_step = mode_step;
  event.tensors = std::move(finding.tensors);
  event.figures = std::move(finding.figures);
  event.message = std::move(finding.message);
  return event;
}

void RuleLedger::stamp(const Slot& slot, RuleEvent& event) const {
  event.time = std::chrono::system_clock::now();
  event.trial = trial_;
  event.rule_configuration = slot.rule.configuration_name;
  event.rule = slot.rule.rule;
}

void RuleLedger::fire(std::size_t rule, RuleEvent event) {
  Slot& slot = slots_[rule];
  event.kind = RuleEvent::Kind::ConditionMet;
  stamp(slot, event);
  if (event.message.empty()) {
    event.message = slot.rule.rule + " condition met at step " + std::to_string(event.global_step);
  }
  if (auto resolved = slot.incidents->fire(event)) {
    stamp(slot, *resolved);
    send(rule, *resolved);
  }
  send(rule, event);
  slot.fired.fetch_add(1, std::memory_order_relaxed);
  if (slot.stop_ran || slot.rule.stop_actions.empty()) return;
  slot.stop_ran = true;
  const StopRequest request{event.rule_configuration, event.rule, event.trial, event.global_step};
  for (const StopAction& action : slot.rule.stop_actions) stopper_.run(action, request);
}

void RuleLedger::clear(std::size_t rule, const std::string& series, std::int64_t step) {
  Slot& slot = slots_[rule];
  auto resolved = slot.incidents->clear(series, step, "cleared at step " + std::to_string(step));
  if (!resolved) return;
  stamp(slot, *resolved);
  send(rule, *resolved);
}

void RuleLedger::send(std::size_t rule, const RuleEvent& event) {
  for (const std::size_t i : routing_.sinks_of(rule)) {
    const auto& sink = sinks_[i];
    try {
      sink->write(event);
    } catch (const std::exception& error) {
      sink_failures_.fetch_add(1, std::memory_order_relaxed);
      report_problem_("", sink->describe() + ": " + error.what());
    }
  }
}

LedgerSummary RuleLedger::finish(const JobEnding& ending,
                                 const std::function<RuleAccount(std::size_t rule)>& account) {
  // Stop commands run on their own; give them a moment to say how they ended.
  const auto stop_outcomes = stopper_.finish(kStopCommandWait);
  const std::string before = ending.describe();
  // Incidents still open end with the job, each said before its rule's status.
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    for (RuleEvent& resolved : slots_[i].incidents->close_all("open when the job ended")) {
      stamp(slots_[i], resolved);
      send(i, resolved);
    }
  }
  LedgerSummary summary;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const Slot& slot = slots_[i];
    const RuleAccount said = account(i);
    RuleEvent status;
    status.kind = RuleEvent::Kind::Status;
    status.time = std::chrono::system_clock::now();
    status.trial = trial_;
    status.rule_configuration = slot.rule.configuration_name;
    status.rule = slot.rule.rule;
    status.steps_evaluated = slot.evaluated.load();
    status.times_fired = slot.fired.load();
    status.incidents = slot.incidents->grouped() ? slot.incidents->opened() : status.times_fired;
    if (slot.failed) {
      status.status = RuleStatus::Error;
      status.message = slot.failure;
    } else if (status.times_fired > 0) {
      // What could not be read is still news beside what was found: the findings cover only
      // what could.
      status.status = RuleStatus::IssuesFound;
      status.message = said.caveat;
    } else if (!said.why_silent.empty()) {
      // Not firing on data that was never read, or on nothing at all, is not "no issues"; for a
      // default rule whose inputs the data lacks it is not a failure either.
      status.status = slot.rule.only_where_applicable && said.nothing_to_evaluate
                          ? RuleStatus::NotApplicable
                          : RuleStatus::Error;
      status.message = said.why_silent;
    } else if (!ending.read_to_the_end()) {
      status.status = RuleStatus::Error;  // `before` says why
    } else {
      status.status = RuleStatus::NoIssuesFound;
    }
    if (!before.empty()) {
      status.message = before + (status.message.empty() ? "" : "; " + status.message);
    }
    if (const auto outcomes = stop_outcomes.find(slot.rule.configuration_name);
        outcomes != stop_outcomes.end()) {
      for (const std::string& outcome : outcomes->second) {
        status.message += (status.message.empty() ? "" : "; ") + outcome;
      }
    }
    send(i, status);
    summary.conditions_met += status.times_fired;
    summary.rule_errors = summary.rule_errors || status.status == RuleStatus::Error;
    summary.statuses.push_back(std::move(status));
  }
  for (const auto& sink : sinks_) {
    try {
      sink->flush();
    } catch (const std::exception& error) {
      sink_failures_.fetch_add(1, std::memory_order_relaxed);
      report_problem_("", sink->describe() + ": " + error.what());
    }
  }
  return summary;
}

}  // namespace rulestream
