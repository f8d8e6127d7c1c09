#include "tests/support/recording_sink.hpp"

#include <algorithm>

namespace rulestream::testing {

void RecordingSink::write(const RuleEvent& event) {
  std::lock_guard lock(mutex_);
  events_.push_back(event);
}

std::vector<RuleEvent> RecordingSink::events() const {
  std::lock_guard lock(mutex_);
  return events_;
}

std::vector<std::int64_t> RecordingSink::steps_fired(const std::string& configuration) const {
  std::vector<std::int64_t> steps;
  for (const auto& event : events()) {
    if (event.kind == RuleEvent::Kind::ConditionMet && event.rule_configuration == configuration) {
      steps.push_back(event.global_step);
    }
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

std::optional<RuleEvent> RecordingSink::status_of(const std::string& configuration) const {
  for (const auto& event : events()) {
    if (event.kind == RuleEvent::Kind::Status && event.rule_configuration == configuration) {
      return event;
    }
  }
  return std::nullopt;
}

}  // namespace rulestream::testing
