#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/windowed_optimum.hpp"

namespace rulestream {

// SageMaker's Overtraining (seed 002): training goes on after the model stopped improving.
// Each loss tensor (the `losses` collection) has two series, judged on window means rather than
// single batches (WindowedOptimum):
//   - training: consecutive windows of patience_train TRAIN saves;
//   - validation: whole evaluation passes (runs of EVAL saves), a window ending with the pass in
//     which it reaches patience_validation EVAL saves. Passes are never split: the model does not
//     change within a pass, so splitting one would compare batches, not models.
// A window improves when its mean is below the best earlier window mean by more than `delta`.
// The rule fires at a TRAIN step (training goes on) when the latest training window did not
// improve and, once the loss has been saved at EVAL steps, the latest validation window did not
// improve either; a job that has not evaluated is judged on training alone. It keeps firing at
// TRAIN steps until a window of either series improves.
class OvertrainingRule final : public Rule {
 public:
  struct Options {
    std::int64_t patience_train = 5;
    std::int64_t patience_validation = 10;
    double delta = 0.01;
  };

  OvertrainingRule(Trial base_trial, Options options);

  static RuleSpec spec();

  std::string_view name() const override { return "Overtraining"; }
  bool invoke_at_step(std::int64_t step) override;
  RequiredTensors required_tensors() const override;

  const Options& options() const { return options_; }

 private:
  // One loss tensor's two series.
  struct LossProgress {
    explicit LossProgress(double delta) : training(delta), validation(delta) {}
    WindowedOptimum training;
    WindowedOptimum validation;
    bool in_evaluation = false;  // the last save was at an EVAL step
    bool evaluated = false;      // saved at some EVAL step so far
  };

  // Adds a TRAIN save; true when the rule's condition holds for this loss after it.
  bool overtrained_after_training_save(LossProgress& progress, double loss, std::int64_t step);
  void describe(const std::string& tensor, const LossProgress& progress, Finding& finding) const;

  Options options_;
  std::map<std::string, LossProgress> progress_;
};

}  // namespace rulestream
