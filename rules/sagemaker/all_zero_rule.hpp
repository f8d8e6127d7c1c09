#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/tensor_selection.hpp"

namespace rulestream {

// SageMaker's AllZero (seed 002): fires at a step when, for a selected tensor saved at that
// step, at least `threshold` percent of the values are zero. Tensors come from collection_names
// and tensor_regex (their union), or are every tensor when neither is given. Only integer and
// floating-point values are counted (numpy's np.number: not bool, strings or complex); tensors
// saved only as reductions, and empty ones, are skipped.
class AllZeroRule final : public Rule {
 public:
  struct Options {
    TensorSelection selection;  // collection_names, tensor_regex
    double threshold = 100.0;   // percent
  };

  AllZeroRule(Trial base_trial, Options options);

  std::string_view name() const override { return "AllZero"; }
  bool invoke_at_step(std::int64_t step) override;
  // Each step is judged on its own values alone.
  bool evaluates_steps_independently() const override { return true; }
  RequiredTensors required_tensors() const override { return options_.selection.required(false); }

  const Options& options() const { return options_; }

 private:
  Options options_;
};

}  // namespace rulestream
