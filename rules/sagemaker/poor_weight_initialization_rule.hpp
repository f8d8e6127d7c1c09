#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/tensor_selection.hpp"

namespace rulestream {

// SageMaker's PoorWeightInitialization (seed 002). Looks only at the first `steps` training
// steps (TRAIN mode steps 0 .. steps-1, rules/support/training_steps.hpp) and fires at such a step
// when any of three signs of a bad initialisation shows:
//  - activation inputs (activation_inputs_regex) have commensurate variances no more: the
//    largest variance among the layers saved at the step is more than `threshold` times the
//    smallest (a zero smallest variance against a non-zero largest counts as infinite);
//  - gradients barely spread: for some tensor of the `gradients` collection, the distance
//    between its 5th and 95th percentiles (numpy's linear interpolation) is below
//    distribution_range;
//  - the loss does not converge: a scalar of the `losses` collection has not gone below its
//    lowest value so far for `patience` training steps.
class PoorWeightInitializationRule final : public Rule {
 public:
  struct Options {
    std::vector<std::string> activation_inputs_regex{".*relu_input"};
    double threshold = 10.0;
    double distribution_range = 0.001;
    std::int64_t patience = 5;
    double steps = 10;
  };

  PoorWeightInitializationRule(Trial base_trial, Options options);

  static RuleSpec spec();

  std::string_view name() const override { return "PoorWeightInitialization"; }
  bool invoke_at_step(std::int64_t step) override;
  RequiredTensors required_tensors() const override;

  const Options& options() const { return options_; }

 private:
  // The lowest loss seen so far and the training step it was seen at.
  struct BestLoss {
    double loss = 0.0;
    std::int64_t train_step = 0;
  };

  void check_activation_variances(std::int64_t step, Finding& finding,
                                  std::vector<std::string>& reasons) const;
  void check_gradient_spread(std::int64_t step, Finding& finding,
                             std::vector<std::string>& reasons) const;
  void check_loss_progress(std::int64_t step, std::int64_t train_step, Finding& finding,
                           std::vector<std::string>& reasons);

  Options options_;
  TensorSelection activation_inputs_;
  std::map<std::string, BestLoss> best_loss_;
};

}  // namespace rulestream
