#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/mode.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/tensor_selection.hpp"

namespace rulestream {

// SageMaker's LossNotDecreasing (seed 002), as smdebug-samples' reference runs it. For each loss
// tensor, only at steps of `mode` where it is saved, and no sooner than num_steps after its last
// comparison: the loss is compared with the loss at the newest saved step at least num_steps
// behind; the rule fires when it did not fall by more than diff_percent:
//   loss[step] > loss[base] * (1 - diff_percent / 100).
// Steps count in `mode`'s numbering (mode steps; global steps for GLOBAL, which compares every
// saved step whatever its mode). Loss tensors are the `losses` collection (use_losses_collection)
// plus collection_names and tensor_regex; only scalars (one element) are compared.
class LossNotDecreasingRule final : public Rule {
 public:
  struct Options {
    TensorSelection selection;  // collection_names, tensor_regex: further loss tensors
    bool use_losses_collection = true;
    std::int64_t num_steps = 10;
    double diff_percent = 0.1;
    // A rise of more than this is called out in the finding ("rising"): the rule fires on any
    // loss that did not fall by diff_percent, a rising loss included.
    double increase_threshold_percent = 5.0;
    Mode mode = Mode::Global;
  };

  // One comparison the rule made, whether it fired or not (steps are global steps).
  struct Comparison {
    std::string tensor;
    std::int64_t step = 0;
    std::int64_t base_step = 0;
    std::int64_t mode_step = 0;  // step and base_step in `mode`'s numbering
    std::int64_t base_mode_step = 0;
    double loss = 0.0;
    double base_loss = 0.0;
    bool triggered = false;
  };

  LossNotDecreasingRule(Trial base_trial, Options options);

  std::string_view name() const override { return "LossNotDecreasing"; }
  bool invoke_at_step(std::int64_t step) override;
  RequiredTensors required_tensors() const override { return selection_.required(); }

  const Options& options() const { return options_; }
  // Every comparison made so far, in order: what the rule saw, for reports and tests.
  const std::vector<Comparison>& comparisons() const { return comparisons_; }

 private:
  Options options_;
  TensorSelection selection_;  // options_.selection, with `losses` when use_losses_collection
  std::map<std::string, std::int64_t> last_compared_;  // tensor -> step of `mode`
  std::vector<Comparison> comparisons_;
};

}  // namespace rulestream
