#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/tensor_selection.hpp"

namespace rulestream {

// SageMaker's SaturatedActivation (seed 002). At each step, for each selected activation input
// tensor saved with its values: the activation is tanh when the tensor's name contains "tanh",
// else sigmoid when it contains "sigmoid" (any case); other tensors are skipped. A unit (one
// position apart from the batch axis, the first) is active for a sample when its input lies
// strictly between the function's min and max thresholds, and saturated when it is active for
// less than threshold_inactivity percent of the batch's samples. The rule fires when more than
// threshold_layer percent of a layer's units are saturated (rules/support/unit_activity.hpp).
class SaturatedActivationRule final : public Rule {
 public:
  struct Options {
    // collection_names, tensor_regex
    TensorSelection selection{.regexes = {".*tanh_input|.*sigmoid_input"}};
    double threshold_tanh_min = -9.4999;
    double threshold_tanh_max = 9.4999;
    double threshold_sigmoid_min = -23.0;
    double threshold_sigmoid_max = 16.99999;
    double threshold_inactivity = 1.0;  // percent of samples
    double threshold_layer = 50.0;      // percent of units
  };

  SaturatedActivationRule(Trial base_trial, Options options);

  static RuleSpec spec();

  std::string_view name() const override { return "SaturatedActivation"; }
  bool invoke_at_step(std::int64_t step) override;
  // Each step is judged on its own values alone.
  bool evaluates_steps_independently() const override { return true; }
  RequiredTensors required_tensors() const override { return options_.selection.required(); }

  const Options& options() const { return options_; }

 private:
  Options options_;
};

}  // namespace rulestream
