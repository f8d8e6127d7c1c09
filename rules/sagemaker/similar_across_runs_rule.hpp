#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/tensor_selection.hpp"
#include "rules/support/value_closeness.hpp"

namespace rulestream {

// SageMaker's SimilarAcrossRuns (seed 002): compares the base trial's tensors with another
// trial's, and fires at a step when a selected tensor's value differs between the two runs, as
// numpy.allclose (rtol 1e-05, atol 1e-08, equal_nan=True) judges it, or its shape differs.
// Tensors come from collection_names and tensor_regex (union; every tensor when neither is
// given). The same step is found in the other run by mode and mode step (global step for
// GLOBAL), so runs that interleave TRAIN and EVAL steps differently still line up. A tensor the
// other run did not save at that step, or saved only as reductions, is not compared; a step
// where nothing could be compared is skipped (TensorUnavailableForStep).
// The other run: SageMaker's `other_trial` names a training job; here it names one of the
// other trials the rule is given (the CLI's extra PATHs) by trial name or path, and may be left
// out when there is exactly one.
class SimilarAcrossRunsRule final : public Rule {
 public:
  struct Options {
    std::string other_trial;    // "" when not given
    TensorSelection selection;  // collection_names, tensor_regex
  };

  // `other` indexes other_trials: the run compared with.
  SimilarAcrossRunsRule(Trial base_trial, std::vector<Trial> other_trials, std::size_t other,
                        Options options);

  static RuleSpec spec();

  std::string_view name() const override { return "SimilarAcrossRuns"; }
  bool invoke_at_step(std::int64_t step) override;
  // Each step is judged on its own values alone.
  bool evaluates_steps_independently() const override { return true; }
  RequiredTensors required_tensors() const override { return options_.selection.required(); }

  const Options& options() const { return options_; }

 private:
  std::size_t other_;
  Options options_;
  // NaN equals NaN here: two runs that both produce NaN at an element agree there (that the NaN is
  // a problem is ExplodingTensor's to say).
  Tolerance tolerance_{.equal_nan = true};
};

}  // namespace rulestream
