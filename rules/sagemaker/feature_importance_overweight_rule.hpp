#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/tensor_selection.hpp"

namespace rulestream {

// SageMaker's FeatureImportanceOverweight (seed 002), for XGBoost. smdebug's XGBoost hook saves
// one scalar per feature and importance type, `feature_importance/<type>/<feature>`, normalised
// so that a type's features sum to 1. At each step, over the selected tensors saved there (one
// per feature), the rule sums the nfeatures largest importances and divides by the sum of all;
// it fires when that share exceeds `threshold`. With nfeatures or fewer features the top ones
// hold everything by definition, so the step is evaluated and quiet.
class FeatureImportanceOverweightRule final : public Rule {
 public:
  struct Options {
    double threshold = 0.8;
    std::int64_t nfeatures = 3;
    std::vector<std::string> tensor_regex{".*feature_importance/weight"};
  };

  FeatureImportanceOverweightRule(Trial base_trial, Options options);

  static RuleSpec spec();

  std::string_view name() const override { return "FeatureImportanceOverweight"; }
  bool invoke_at_step(std::int64_t step) override;
  // Each step is judged on its own values alone.
  bool evaluates_steps_independently() const override { return true; }
  RequiredTensors required_tensors() const override { return selection_.required(); }

  const Options& options() const { return options_; }

 private:
  Options options_;
  TensorSelection selection_;
};

}  // namespace rulestream
