#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"

namespace rulestream {

// SageMaker's StalledTrainingRule (seed 002): fires when no new step has arrived for more than
// `threshold` seconds. A step's arrival is when its first index file landed (Trial::step_arrival:
// the time a live pipeline saw it, or the file's modification time in a replay).
//
// Two ways to see a stall:
// - invoke_at_step(step): the gap between this step's arrival and the previous step's exceeds
//   the threshold (a stall in the past: a replay sees it from the files' timestamps). It fires
//   at the step after the gap.
// - invoke_at_time(now), which a live pipeline calls every check_interval(): now minus the last
//   step's arrival exceeds the threshold, while training is still silent. Before any step it
//   measures from when the rule was created (a job that never saves anything stalls too).
// Each stall fires once: a stall the clock reported is not reported again by the step that
// ends it; the next step re-arms the rule.
//
// stop_training_on_fire only says that training is to be stopped when the rule fires; the
// pipeline carries it out through the rule's stop action (a configuration error without one).
// training_job_name_prefix is SageMaker's way of finding the job to stop; rulestream has no
// SageMaker client, so it is accepted and named in the rule's messages.
class StalledTrainingRule final : public Rule {
 public:
  struct Options {
    std::int64_t threshold_seconds = 1800;
    bool stop_training_on_fire = false;
    std::string training_job_name_prefix;
  };

  StalledTrainingRule(Trial base_trial, Options options);

  std::string_view name() const override { return "StalledTrainingRule"; }
  bool invoke_at_step(std::int64_t step) override;
  bool invoke_at_time(std::chrono::system_clock::time_point now) override;
  std::optional<std::chrono::milliseconds> check_interval() const override;
  bool stops_training_on_fire() const override { return options_.stop_training_on_fire; }
  RequiredTensors required_tensors() const override {
    return RequiredTensors{.values = false, .nothing = true};
  }

  const Options& options() const { return options_; }

 private:
  // The finding for `seconds` without a new step after `last_step` (nullopt: before any);
  // `what` says it for a person.
  Finding stall_finding(std::optional<std::int64_t> last_step, double seconds,
                        const std::string& what) const;

  Options options_;
  std::chrono::system_clock::duration threshold_;
  std::chrono::system_clock::time_point created_;
  std::optional<std::int64_t> last_step_;
  std::optional<std::chrono::system_clock::time_point> last_arrival_;  // the latest one seen
  bool stall_reported_ = false;  // by invoke_at_time, for the silence after last_step_
};

}  // namespace rulestream
