#pragma once

// One rule's incidents in a job: its firings grouped by series (the finding's first tensor), so
// that a problem is one alert with updates rather than a message per step. An incident opens at
// a series' first firing and is updated by the ones after; it resolves
// - when the rule says its condition has cleared (the judging series rules do, once it has been
//   clear for their documented span: SeriesState::take_cleared),
// - for a rule that does not say so, when the series' next firing comes `quiet_steps` steps or
//   more after its last one (a rule that fires at every step while its condition holds, and
//   then stops: the old incident is resolved `quiet_steps` after its last firing and the new
//   firing opens the next),
// - or when the job ends, whatever is still open.
// Ids are "<rule configuration>/<series>#<n>", n counting the series' incidents from 1.
//
// Not thread-safe: the ledger calls a rule's book from the one thread that calls for the rule.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/model/rule_event.hpp"
#include "engine/graph/incident_policy.hpp"

namespace rulestream {

class IncidentBook {
 public:
  // `rule`: the rule's name (its default grouping); `clears_itself`: the rule says when its
  // condition clears (clear()).
  IncidentBook(std::string configuration_name, const std::string& rule, IncidentPolicy policy,
               bool clears_itself);

  // A firing: its `incident` note filled in (opened or updated). When it comes after the
  // series' quiet span, the old incident's resolution is returned, to be sent first.
  std::optional<RuleEvent> fire(RuleEvent& event);
  // The rule's condition cleared on `series` at `step`: the incident's resolution, if one is open.
  std::optional<RuleEvent> clear(const std::string& series, std::int64_t step,
                                 const std::string& why);
  // The job is over: the resolution of every incident still open, in the order they opened.
  std::vector<RuleEvent> close_all(const std::string& why);

  std::int64_t opened() const { return opened_; }
  bool grouped() const { return grouped_; }

 private:
  struct Open {
    IncidentNote note;
    std::int64_t order = 0;  // when it opened, among the rule's incidents
    std::string first_message;
    std::optional<double> first_value;  // the first firing's first figure
  };

  RuleEvent resolution(const std::string& series, Open& open, std::int64_t step,
                       const std::string& why) const;

  std::string configuration_name_;
  bool grouped_;
  std::int64_t quiet_steps_;                   // 0: never
  std::map<std::string, Open> open_;           // by series
  std::map<std::string, std::int64_t> count_;  // incidents per series so far
  std::int64_t opened_ = 0;
};

}  // namespace rulestream
