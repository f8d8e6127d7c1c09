#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/held_values.hpp"
#include "rules/support/tensor_states.hpp"
#include "rules/support/training_steps.hpp"

namespace rulestream {

// SageMaker's WeightUpdateRatio (seed 002). At each training step s
// (rules/support/training_steps.hpp), for each tensor of the `weights` collection saved there with
// its values, and its previous saved training step p:
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
  // A step's weights are listed ahead (Rule::reads_ahead); their values are read where the step
  // is judged, a few MiB at a time, rather than held for steps read ahead.
  bool reads_ahead() const override { return true; }
  std::unique_ptr<StepReading> read_step(const Trial& trial, std::int64_t step) const override;
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

  // What read_step() reads: whether the step trains, its TRAIN step, and its weights.
  struct Reading;
  // What the rule keeps of one weight: its last saved training step, and its value there.
  struct WeightState {
    TensorSaves saves;
    HeldValues::Slot* held = nullptr;
  };
  // What measuring one weight's update at a step found.
  struct Measured;
  // Moves each weight of `chunk` that has a value at `step` on to the step, and measures its
  // update from its previous saved step; holds its value for the next. Each weight's on one
  // thread, as many at once as there are threads free. `current` is emptied.
  std::vector<Measured> measure(const Trial& trial, std::span<const TensorRef> chunk,
                                std::span<WeightState* const> states,
                                std::vector<std::optional<TensorValue>>& current, std::int64_t step,
                                std::int64_t train_step);

  Options options_;
  // The weights read at the last step, for the next one's updates.
  HeldValues held_;
  TensorStates<WeightState> states_;
};

}  // namespace rulestream
