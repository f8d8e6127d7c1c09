#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
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

// SageMaker's rule evaluation statuses, reported once per rule at the end of a trial, and one of
// rulestream's: NotApplicable, for a rule run by default (rules/default_rules.hpp) whose inputs
// the data does not have (no gradient norm logged). It claims nothing either way, as Error does,
// but is no failure: a job whose other rules found nothing still ends with exit status 0.
enum class RuleStatus { NoIssuesFound, IssuesFound, Error, NotApplicable };
std::string_view rule_status_name(RuleStatus status);  // "NoIssuesFound", ...

// What rules tell the world: a condition met at a step, or a rule's status at the end.
struct RuleEvent {
  enum class Kind { ConditionMet, Status };

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

  // Status: the outcome of the whole evaluation (message says why for Error).
  std::optional<RuleStatus> status;
  std::int64_t steps_evaluated = 0;
  std::int64_t times_fired = 0;

  // One JSON object, as sinks write it (one per line). NaN/Inf figures as strings.
  std::string to_json() const;
  // One readable line for a terminal.
  std::string to_text() const;
};

}  // namespace rulestream
