#pragma once

// A custom rule, as a user writes one: smdebug's CustomGradientRule walk-through (seed 003) in
// C++. It fires at a step when the mean absolute value of any gradient exceeds a threshold.
// Only rulestream's public headers are used; copy this file and change invoke_at_step.

#include <cstdint>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "trial/api/tensor.hpp"
#include "trial/api/trial.hpp"

namespace example {

class CustomGradientRule final : public rulestream::Rule {
 public:
  CustomGradientRule(rulestream::Trial base_trial, double threshold)
      : Rule(std::move(base_trial)), threshold_(threshold) {}

  // How the registry builds the rule from SageMaker-style string parameters
  // ({"threshold": "20.0"}), with a clear error for a bad or unknown parameter.
  static rulestream::RuleSpec spec() {
    rulestream::RuleSpec spec;
    spec.name = "CustomGradientRule";
    spec.description = "gradients whose mean absolute value exceeds a threshold";
    spec.parameters = {{"threshold", "float", "20.0",
                        "fires when a gradient's mean absolute value is above this"}};
    spec.create = [](const rulestream::RuleContext& context,
                     const rulestream::RuleParameters& parameters) {
      rulestream::ParameterReader reader("CustomGradientRule", parameters);
      const double threshold = reader.number("threshold", 20.0);
      reader.finish();
      return std::unique_ptr<rulestream::Rule>(
          new CustomGradientRule(context.base_trial, threshold));
    };
    return spec;
  }

  std::string_view name() const override { return "CustomGradientRule"; }

  // Called once per step, in order. A gradient that was not saved at this step makes
  // reduction_value throw TensorUnavailableForStep, and invoke_rule skips the step.
  bool invoke_at_step(std::int64_t step) override {
    for (const std::string& tensor_name : base_trial().tensor_names({.collection = "gradients"})) {
      const rulestream::Tensor tensor = base_trial().tensor(tensor_name);
      const double abs_mean =
          tensor
              .reduction_value(step, rulestream::Reduction::Mean, rulestream::Mode::Global,
                               std::nullopt, /*abs=*/true)
              .as_double();
      if (abs_mean > threshold_) {
        std::ostringstream message;
        message << tensor_name << " abs mean " << abs_mean << " > threshold " << threshold_;
        report({.tensors = {tensor_name},
                .figures = {{"abs_mean", abs_mean, tensor_name}, {"threshold", threshold_, {}}},
                .message = message.str()});
        return true;
      }
    }
    return false;
  }

  // Lets a pipeline fetch only the gradients for this rule.
  rulestream::RequiredTensors required_tensors() const override {
    return {.collections = {"gradients"}};
  }

 private:
  double threshold_;
};

}  // namespace example
