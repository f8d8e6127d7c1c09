#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"

namespace rulestream {

// SageMaker's Confusion (seed 002). At each step that saved labels and predictions, the rule
// builds that step's confusion matrix C (C[label][prediction] counts samples) of category_no
// classes (when not given: the largest class seen at the step + 1, at least 2) and checks each
// predicted class i that was predicted at least once, over its column:
//   C[i][i] / sum_j C[j][i] >= min_diag         (the share of class-i predictions that are right)
//   C[j][i] / sum_j C[j][i] <= max_off_diag     (for every j != i: the share that is class j)
// and fires when any check fails. The document writes the diagonal's denominator as
// sum_j C[j][j]; read literally every class of a balanced 10-class problem would fail, so the
// column sum of its off-diagonal formula is used for both (see docs/rules.md).
// Labels: the tensor named `labels` when the job saved one, else the tensors of
// labels_collection; predictions likewise. Predictions of two or more dimensions are class
// scores (XGBoost's multi:softprob): the class is their argmax.
class ConfusionRule final : public Rule {
 public:
  struct Options {
    std::optional<std::int64_t> category_no;
    std::string labels = "labels";
    std::string predictions = "predictions";
    std::string labels_collection = "labels";
    std::string predictions_collection = "predictions";
    double min_diag = 0.9;
    double max_off_diag = 0.1;
  };

  ConfusionRule(Trial base_trial, Options options);

  static RuleSpec spec();

  std::string_view name() const override { return "Confusion"; }
  bool invoke_at_step(std::int64_t step) override;
  // Each step is judged on its own values alone.
  bool evaluates_steps_independently() const override { return true; }
  RequiredTensors required_tensors() const override;

  const Options& options() const { return options_; }

 private:
  Options options_;
};

}  // namespace rulestream
