#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/tensor_selection.hpp"

namespace rulestream {

// SageMaker's ExplodingTensor (seed 002): fires at a step when a selected tensor saved at that
// step holds NaN or an infinity (only NaN with only_nan). Tensors come from collection_names and
// tensor_regex (their union), or are every tensor when neither is given. Only floating-point
// values can hold them; tensors saved only as reductions are skipped, as smdebug's reference
// does (smdebug-samples README).
class ExplodingTensorRule final : public Rule {
 public:
  struct Options {
    TensorSelection selection;  // collection_names, tensor_regex
    bool only_nan = false;
  };

  ExplodingTensorRule(Trial base_trial, Options options);

  std::string_view name() const override { return "ExplodingTensor"; }
  bool invoke_at_step(std::int64_t step) override;
  // Each step is judged on its own values alone.
  bool evaluates_steps_independently() const override { return true; }
  RequiredTensors required_tensors() const override { return options_.selection.required(false); }

  const Options& options() const { return options_; }

 private:
  Options options_;
};

}  // namespace rulestream
