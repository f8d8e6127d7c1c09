#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/tensor_selection.hpp"

namespace rulestream {

// SageMaker's TensorVariance (seed 002): fires at a step when a selected tensor saved at that
// step has a variance above max_threshold or below min_threshold. The variance is smdebug's
// reduction_value(step, "variance"): the saved reduction when the job saved one, else numpy's
// population variance of the values. Tensors of fewer than two elements have no spread to
// speak of and are skipped, as are tensors whose variance cannot be had (strings, NaN).
// Tensors come from collection_names and tensor_regex (their union), every tensor when neither
// is given. Both thresholds default to None, but at least one must be set: a TensorVariance
// without either could never fire.
class TensorVarianceRule final : public Rule {
 public:
  struct Options {
    TensorSelection selection;  // collection_names, tensor_regex
    std::optional<double> max_threshold;
    std::optional<double> min_threshold;
  };

  TensorVarianceRule(Trial base_trial, Options options);

  static RuleSpec spec();

  std::string_view name() const override { return "TensorVariance"; }
  bool invoke_at_step(std::int64_t step) override;
  // Each step is judged on its own values alone.
  bool evaluates_steps_independently() const override { return true; }
  RequiredTensors required_tensors() const override { return options_.selection.required(false); }

  const Options& options() const { return options_; }

 private:
  Options options_;
};

}  // namespace rulestream
