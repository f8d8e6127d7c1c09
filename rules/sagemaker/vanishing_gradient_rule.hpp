#pragma once

#include <cstdint>
#include <string_view>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"

namespace rulestream {

// SageMaker's VanishingGradient (seed 002): fires at a step when any tensor of the `gradients`
// collection has a mean absolute value below `threshold`. As in smdebug, a step where a gradient
// was not saved (an EVAL step, a step between save intervals) is skipped: reduction_value throws
// TensorUnavailableForStep out of invoke_at_step.
class VanishingGradientRule final : public Rule {
 public:
  struct Options {
    double threshold = 0.0000001;
  };

  VanishingGradientRule(Trial base_trial, Options options);

  std::string_view name() const override { return "VanishingGradient"; }
  bool invoke_at_step(std::int64_t step) override;
  // Each step is judged on its own values alone.
  bool evaluates_steps_independently() const override { return true; }
  RequiredTensors required_tensors() const override;

  const Options& options() const { return options_; }

 private:
  Options options_;
};

}  // namespace rulestream
