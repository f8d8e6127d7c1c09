#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "pipeline/mode.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"

namespace rulestream {

// SageMaker's Overtraining (seed 002), as early stopping reads it. For each loss tensor (the
// `losses` collection) and each of TRAIN and EVAL, the rule tracks the optimum: the first loss,
// then any loss below the optimum by more than `delta` (absolute). At a step that saved the loss
// it fires when the optimum is patience_train (TRAIN) or patience_validation (EVAL) mode steps
// old or older: training went on without improving. It keeps firing at that mode's steps
// until a new optimum comes.
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
  struct Optimum {
    double loss = 0.0;
    std::int64_t mode_step = 0;
    std::int64_t global_step = 0;
  };

  Options options_;
  std::map<std::pair<std::string, Mode>, Optimum> optima_;
};

}  // namespace rulestream
