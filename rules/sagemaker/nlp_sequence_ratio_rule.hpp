#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/tensor_selection.hpp"

namespace rulestream {

// SageMaker's NLPSequenceRatio (seed 002). Every tensor matching tensor_regex that is saved
// with its values is a batch of token-id sequences (any shape). At each step, for each token in
// token_values, the rule counts the elements equal to it across the whole batch; it fires when
// that share exceeds the token's threshold in token_thresholds_percent (the lists pair up by
// position): too much padding (EOS) suggests another bucketing, too many unknown tokens another
// vocabulary.
class NlpSequenceRatioRule final : public Rule {
 public:
  struct Options {
    std::vector<std::string> tensor_regex{".*embedding0_input_0"};
    std::vector<double> token_values{0.0};
    std::vector<double> token_thresholds_percent{50.0};
  };

  NlpSequenceRatioRule(Trial base_trial, Options options);

  static RuleSpec spec();

  std::string_view name() const override { return "NLPSequenceRatio"; }
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
