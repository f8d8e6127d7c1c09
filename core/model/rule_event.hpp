#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/mode.hpp"
#include "core/model/utc_time.hpp"

namespace rulestream {

// A number that made a rule fire, with what it is: {"abs_mean", 3e-9, "gradient/fc1.weight"},
// {"threshold", 1e-7}.
struct Figure {
  std::string name;
  double value = 0.0;
  std::optional<std::string> tensor;

  friend bool operator==(const Figure&, const Figure&) = default;
};

// A figure as events print it: six significant digits ("3.2e-10", "1e-07", "0.1"), and "NaN",
// "Infinity", "-Infinity" as rule events spell the non-finite values.
std::string figure_text(double value);

// SageMaker's rule evaluation statuses, reported once per rule at the end of a trial, and one of
// rulestream's: NotApplicable, for a rule run by default (rules/default_rules.hpp) whose inputs
// the data does not have (no gradient norm logged). It claims nothing either way, as Error does,
// but is no failure: a job whose other rules found nothing still ends with exit status 0.
enum class RuleStatus { NoIssuesFound, IssuesFound, Error, NotApplicable };
std::string_view rule_status_name(RuleStatus status);  // "NoIssuesFound", ...

// What an event says of its incident: the firings of one rule configuration on one series (the
// finding's first tensor), grouped into one problem (engine/graph/incident_book.hpp). A firing
// opens one or updates it; an IncidentResolved event closes it.
struct IncidentNote {
  enum class State { Opened, Updated, Resolved };

  std::string id;  // "<rule configuration>/<series>#<n>": unique within the job
  State state = State::Opened;
  std::int64_t firings = 0;      // its firings so far (all of them, resolved)
  std::int64_t opened_step = 0;  // the first firing's step
  std::int64_t last_step = 0;    // the latest firing's step
  // The firing whose first figure strayed farthest from the first firing's (in ratio: a loss
  // up 1e8, a gradient norm down 1e4): the incident at its worst. Empty when no firing had one.
  std::optional<Figure> worst;
  std::int64_t worst_step = 0;

  friend bool operator==(const IncidentNote&, const IncidentNote&) = default;
};
// "opened", "updated", "resolved".
std::string_view incident_state_name(IncidentNote::State state);

// What rules tell the world: a condition met at a step, an incident resolved, or a rule's status
// at the end.
struct RuleEvent {
  enum class Kind { ConditionMet, Status, IncidentResolved };

  Kind kind = Kind::ConditionMet;
  std::chrono::system_clock::time_point time;
  std::string trial;               // the trial's name
  std::string rule_configuration;  // RuleConfigurationName (defaults to the rule's name)
  std::string rule;                // the rule that was invoked ("VanishingGradient")

  // ConditionMet: where and why.
  std::int64_t global_step = 0;
  Mode mode = Mode::Global;
  std::int64_t mode_step = 0;
  std::vector<std::string> tensors;
  std::vector<Figure> figures;
  std::string message;  // for a person: "gradient/fc1.weight abs mean 3e-09 < threshold 1e-07"

  // ConditionMet, IncidentResolved: the incident the firing belongs to, or that resolved (then
  // global_step is where it resolved, tensors its series and message why). None for a rule
  // whose firings are not grouped.
  std::optional<IncidentNote> incident;

  // Status: the outcome of the whole evaluation (message says why for Error).
  std::optional<RuleStatus> status;
  std::int64_t steps_evaluated = 0;
  std::int64_t times_fired = 0;
  std::int64_t incidents = 0;  // the incidents its firings made (as many as firings ungrouped)

  // One JSON object, as sinks write it (one per line). NaN/Inf figures as strings.
  std::string to_json() const;
  // One readable line for a terminal.
  std::string to_text() const;
  // "condition_met", "status", "incident_resolved": the JSON's "kind".
  static std::string_view kind_name(Kind kind);
  // A firing that only updates an open incident: what a person has already been told. Outputs
  // for people (text, Slack, webhooks) skip it; JSON streams keep every firing.
  bool updates_an_incident() const {
    return kind == Kind::ConditionMet && incident &&
           incident->state == IncidentNote::State::Updated;
  }
};

}  // namespace rulestream
