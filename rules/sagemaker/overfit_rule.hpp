#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/mode.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/tensor_selection.hpp"

namespace rulestream {

// SageMaker's Overfit (seed 002): compares each loss tensor's validation (EVAL) and training
// (TRAIN) values. Training alternates TRAIN steps and evaluation passes of EVAL steps; the mean
// training loss is taken over the TRAIN steps since the previous evaluation pass, the mean
// validation loss over the current pass so far. At every EVAL step that saved the loss:
//   ratio = (mean validation - mean training) / |mean training|
// and the rule fires once the ratio has exceeded ratio_threshold at `patience` consecutive
// EVAL steps (and at each following one while it stays above). Steps before start_step (a
// global step) are ignored; a pass with no training window before it, or a mean training loss
// of 0, is not judged. Loss tensors: tensor_regex when given, else the `losses` collection.
class OverfitRule final : public Rule {
 public:
  struct Options {
    std::vector<std::string> tensor_regex;
    std::int64_t start_step = 0;
    std::int64_t patience = 1;
    double ratio_threshold = 0.1;
  };

  OverfitRule(Trial base_trial, Options options);

  static RuleSpec spec();

  std::string_view name() const override { return "Overfit"; }
  bool invoke_at_step(std::int64_t step) override;
  RequiredTensors required_tensors() const override { return selection_.required(); }

  const Options& options() const { return options_; }

 private:
  // A loss tensor's running figures.
  struct Series {
    std::optional<Mode> last_mode;  // mode of the last step that saved it
    double train_sum = 0.0;         // the TRAIN steps since the last evaluation pass
    std::int64_t train_count = 0;
    std::optional<double> train_mean;  // the window before the current evaluation pass
    std::int64_t train_window = 0;     // its number of steps
    double eval_sum = 0.0;             // the current evaluation pass
    std::int64_t eval_count = 0;
    std::int64_t exceeded = 0;  // consecutive EVAL steps above ratio_threshold
  };

  Options options_;
  TensorSelection selection_;
  std::map<std::string, Series> series_;
};

}  // namespace rulestream
