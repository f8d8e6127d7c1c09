#include "tests/support/rule_event_samples.hpp"

namespace rulestream::testing {

RuleEvent sample_rule_event(std::int64_t step, std::string rule_configuration) {
  RuleEvent event;
  event.kind = RuleEvent::Kind::ConditionMet;
  event.time = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000 + step));
  event.trial = "trial-a";
  event.rule_configuration = std::move(rule_configuration);
  event.rule = "VanishingGradient";
  event.global_step = step;
  event.mode = Mode::Train;
  event.mode_step = step / 2;
  event.tensors = {"gradient/fc1.weight"};
  event.figures = {{.name = "abs_mean",
                    .value = 1e-9 * static_cast<double>(step + 1),
                    .tensor = "gradient/fc1.weight"},
                   {.name = "threshold", .value = 1e-7}};
  event.message =
      "step " + std::to_string(step) + ": \"gradient/fc1.weight\" abs mean below threshold \\ µ";
  return event;
}

RuleEvent sample_status_event(RuleStatus status, std::string rule_configuration) {
  RuleEvent event;
  event.kind = RuleEvent::Kind::Status;
  event.time = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));
  event.trial = "trial-a";
  event.rule_configuration = std::move(rule_configuration);
  event.rule = "VanishingGradient";
  event.status = status;
  event.steps_evaluated = 100;
  event.times_fired = 3;
  event.message = "3 of 100 steps met the condition";
  return event;
}

}  // namespace rulestream::testing
