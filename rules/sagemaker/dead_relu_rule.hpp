#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/tensor_selection.hpp"

namespace rulestream {

// SageMaker's DeadRelu (seed 002). At each step, for each ReLU output tensor (tensor_regex)
// saved with its values: a ReLU unit (one position of the tensor apart from the batch axis,
// the first) is active for a sample when its output is > 0, and dead when it is active for less
// than threshold_inactivity percent of the batch's samples. The rule fires when more than
// threshold_layer percent of a layer's units are dead (rules/support/unit_activity.hpp).
class DeadReluRule final : public Rule {
 public:
  struct Options {
    std::vector<std::string> tensor_regex{".*relu_output"};
    double threshold_inactivity = 1.0;  // percent of samples
    double threshold_layer = 50.0;      // percent of units
  };

  DeadReluRule(Trial base_trial, Options options);

  static RuleSpec spec();

  std::string_view name() const override { return "DeadRelu"; }
  bool invoke_at_step(std::int64_t step) override;
  // Each step is judged on its own values alone.
  bool evaluates_steps_independently() const override { return true; }
  RequiredTensors required_tensors() const override { return selection_.required(); }

  const Options& options() const { return options_; }

 private:
  Options options_;
  TensorSelection selection_;
};

}  // namespace rulestream
