#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/tensor_selection.hpp"

namespace rulestream {

// SageMaker's ClassImbalance (seed 002). At each step that saved both a labels tensor (names
// matching labels_regex) and a predictions tensor (predictions_regex), the rule adds that
// step's samples to running counts since the start of the job: samples per true class, and
// mispredicted samples per true class (prediction != label). Labels are class ids; predictions
// are class ids too, or with `argmax` one score per class (shape samples x classes). Several
// matching tensors are concatenated in name order. Once at least `samples` labels have been
// counted, the rule fires at a step when
//   largest class count / smallest class count > threshold_imbalance, or
//   mispredicted / count of some class > threshold_misprediction.
// Classes are those that occur among the labels. Steps without both tensors are skipped.
class ClassImbalanceRule final : public Rule {
 public:
  struct Options {
    double threshold_imbalance = 10.0;
    double threshold_misprediction = 0.7;
    std::int64_t samples = 500;
    bool argmax = false;
    std::vector<std::string> labels_regex{".*labels"};
    std::vector<std::string> predictions_regex{".*predictions"};
  };

  ClassImbalanceRule(Trial base_trial, Options options);

  static RuleSpec spec();

  std::string_view name() const override { return "ClassImbalance"; }
  bool invoke_at_step(std::int64_t step) override;
  RequiredTensors required_tensors() const override;

  const Options& options() const { return options_; }

 private:
  struct ClassCounts {
    std::int64_t samples = 0;
    std::int64_t mispredicted = 0;
  };

  Options options_;
  TensorSelection labels_;
  TensorSelection predictions_;
  std::map<std::int64_t, ClassCounts> classes_;  // true class -> counts so far
  std::int64_t samples_seen_ = 0;
};

}  // namespace rulestream
