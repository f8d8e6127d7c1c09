#pragma once

#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/tensor_selection.hpp"
#include "rules/support/tensor_states.hpp"
#include "rules/support/training_steps.hpp"
#include "rules/support/value_closeness.hpp"

namespace rulestream {

// SageMaker's UnchangedTensor (seed 002). At each training step (rules/support/training_steps.hpp),
// for each selected tensor saved there with its values: the value at this step and the values at
// the tensor's previous num_steps - 1 saved training steps (not necessarily consecutive) are
// compared as numpy.allclose(older, current, rtol, atol, equal_nan) does, element by element:
// |older - current| <= atol + rtol * |current|, infinities equal only to themselves, NaN equal
// to NaN only with equal_nan. The rule fires when all of them are close to the current value,
// i.e. the tensor has not moved over its last num_steps saves. A tensor with fewer saves, or
// whose shape changed, is not called unchanged; strings and complex values are skipped.
// Tensors come from collection_names and tensor_regex (their union), every tensor when neither
// is given.
class UnchangedTensorRule final : public Rule {
 public:
  struct Options {
    TensorSelection selection;  // collection_names, tensor_regex
    std::int64_t num_steps = 3;
    double rtol = 1e-05;
    double atol = 1e-08;
    bool equal_nan = false;
  };

  UnchangedTensorRule(Trial base_trial, Options options);

  static RuleSpec spec();

  std::string_view name() const override { return "UnchangedTensor"; }
  bool invoke_at_step(std::int64_t step) override;
  // A step's tensors and their screens depend on the step alone: they are read ahead, and only
  // the saved steps, the kept screens and the comparisons are serial (Rule::reads_ahead).
  bool reads_ahead() const override { return true; }
  std::unique_ptr<StepReading> read_step(const Trial& trial, std::int64_t step) const override;
  // Values are compared only when reductions say they may be close (read on demand then).
  RequiredTensors required_tensors() const override { return options_.selection.required(false); }

  const Options& options() const { return options_; }

 private:
  // The screening figures (kCloseScreenReductions) of a tensor at one saved step.
  struct Screen {
    std::int64_t step = 0;
    CloseScreen screen;
  };
  // A tensor's screen at the step being evaluated: nullopt when it was saved there only as
  // reductions; `failure` when reading them threw anything else.
  struct CurrentScreen {
    std::optional<CloseScreen> screen;
    std::exception_ptr failure;
  };
  // What read_step() reads: the selected tensors and their screens at a training step.
  struct Reading;
  // The screens of `refs` at `step`, in their order, found in parallel (they change no state).
  std::vector<CurrentScreen> current_screens(const Trial& trial, std::span<const TensorRef> refs,
                                             std::int64_t step) const;

  // What the rule keeps of one tensor: its saved training steps, and its screens at the last
  // num_steps of them as read at those steps (a step compares its value's screen with those of
  // the saves before it; reading them again from the trial was two thirds of the rule's
  // lookups).
  struct TensorState {
    TensorSaves saves;
    boost::container::small_vector<Screen, 3> screens;
  };
  // What judging one tensor at a step found: whether it is unchanged (the largest difference)
  // since which step, or what reading its values threw.
  struct Verdict {
    std::optional<double> largest;
    std::int64_t since_step = 0;
    std::exception_ptr failure;
  };
  // Moves one tensor's state on to `step` and judges it there. Touches that tensor's state
  // alone: different tensors are judged on different threads at once.
  Verdict judge(const Trial& trial, const Tensor& tensor, const CloseScreen& current_screen,
                TensorState& state, std::int64_t step) const;

  Options options_;
  TensorStates<TensorState> states_;
};

}  // namespace rulestream
