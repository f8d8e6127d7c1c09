#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "rules/held_values.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/training_steps.hpp"

namespace rulestream {

// SageMaker's WeightUpdateRatio (seed 002). At each training step s (rules/training_steps.hpp),
// for each tensor of the `weights` collection saved there with its values, and its previous
// saved training step p:
//   ratio = ||W[s] - W[p]||_2 / (||W[p]||_2 + epsilon)
// (the size of the update relative to the weights it was applied to, both as element-wise L2
// norms). The rule fires when ratio > large_threshold or ratio < small_threshold. With num_steps
// set, p must lie within num_steps training steps of s (counted in TRAIN mode steps), otherwise
// the tensor is not compared at s; by default any previous saved training step will do.
// A shape change or a ratio that is NaN is not compared.
class WeightUpdateRatioRule final : public Rule {
 public:
  struct Options {
    std::optional<std::int64_t> num_steps;
    double large_threshold = 10.0;
    double small_threshold = 0.00000001;
    double epsilon = 0.000000001;
  };

  WeightUpdateRatioRule(Trial base_trial, Options options);

  static RuleSpec spec();

  std::string_view name() const override { return "WeightUpdateRatio"; }
  bool invoke_at_step(std::int64_t step) override;
  RequiredTensors required_tensors() const override { return {.collections = {"weights"}}; }

  const Options& options() const { return options_; }

 private:
  // The values of the first of `weights` at `step`, in their order (nullopt: saved only as
  // reductions), and what stopped the reading short: an exception from a read (rethrown once
  // the values before it are judged), or copies past a read's share of kValueBytesAtATime.
  struct WeightReads {
    std::vector<std::optional<TensorValue>> values;
    std::exception_ptr failure;
  };
  WeightReads read_weights(const Trial& trial, std::span<const TensorRef> weights,
                           std::int64_t step) const;

  Options options_;
  SavedStepHistory history_{1};
  HeldValues held_;  // the weights read at the last step, for the next one's updates
};

}  // namespace rulestream
