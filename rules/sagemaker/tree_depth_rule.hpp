#pragma once

#include <cstdint>
#include <string_view>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"

namespace rulestream {

// SageMaker's TreeDepth (seed 002), for XGBoost. smdebug's XGBoost hook saves the tree grown at
// each boosting round as columns `trees/Tree` (tree id per node) and `trees/Node` (node id per
// node). As the document defines it, a tree's depth is log2 of its largest node id (0 for a
// tree that is a single leaf). The rule fires at a step when a tree saved there is shallower
// than `depth`: XGBoost refused the splits that would have made it grow as deep as configured.
// Without `trees/Tree` (or with a different length) all nodes count as one tree.
class TreeDepthRule final : public Rule {
 public:
  struct Options {
    double depth = 4.0;
  };

  TreeDepthRule(Trial base_trial, Options options);

  static RuleSpec spec();

  std::string_view name() const override { return "TreeDepth"; }
  bool invoke_at_step(std::int64_t step) override;
  // Each step is judged on its own values alone.
  bool evaluates_steps_independently() const override { return true; }
  RequiredTensors required_tensors() const override;

  const Options& options() const { return options_; }

 private:
  Options options_;
};

}  // namespace rulestream
