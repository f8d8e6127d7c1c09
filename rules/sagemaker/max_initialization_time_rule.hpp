#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"

namespace rulestream {

// SageMaker's profiler rule MaxInitializationTime: the job's first step came more than
// `threshold` minutes after the job started (initialization, data download or compilation took
// too long).
//
// On a TensorBoard logdir (any series format) the series form judges each run's first step: its
// wall time against when the run started (SeriesInfo::run_started: a TensorBoard run's first
// record, 0 for a metrics file's elapsed-time column); a run whose start is unknown, or whose
// first step has no time, is not judged. A watch also fires when no step at all has come within
// `threshold` of its start (SeriesRule::silence).
//
// smdebug files do not say when the job started. The trial form fires from the clock of a watch
// (invoke_at_time) when no step has arrived within `threshold` of the rule's start, and judges the
// first step's arrival against that start only when the step arrived after it (a watch that
// began before the job's first step: the same measure as the clock's). A replay, whose steps all
// arrived before the rule started, evaluates no step.
class MaxInitializationTimeRule final : public Rule {
 public:
  struct Options {
    double threshold_minutes = 20.0;
    std::int64_t scan_interval_us = 60'000'000;  // SageMaker's; accepted, not used
  };

  MaxInitializationTimeRule(Trial base_trial, Options options);

  std::string_view name() const override { return "MaxInitializationTime"; }
  bool invoke_at_step(std::int64_t step) override;
  bool invoke_at_time(std::chrono::system_clock::time_point now) override;
  std::optional<std::chrono::milliseconds> check_interval() const override;
  RequiredTensors required_tensors() const override {
    return RequiredTensors{.values = false, .nothing = true};
  }

  const Options& options() const { return options_; }

 private:
  Options options_;
  std::chrono::system_clock::duration threshold_;
  std::chrono::system_clock::time_point created_;
  bool first_step_invoked_ = false;
  bool step_landed_ = false;  // the trial holds a step (invoked or not)
  bool reported_ = false;     // by the clock
};

}  // namespace rulestream
