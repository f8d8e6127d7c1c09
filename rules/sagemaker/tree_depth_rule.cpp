#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string_view>

#include "core/model/exceptions.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/rule_text.hpp"
#include "trial/api/tensor.hpp"

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

  std::string_view name() const override { return "TreeDepth"; }
  bool invoke_at_step(std::int64_t step) override;
  // Each step is judged on its own values alone.
  bool evaluates_steps_independently() const override { return true; }
  RequiredTensors required_tensors() const override;

  const Options& options() const { return options_; }

 private:
  Options options_;
};

namespace {

constexpr const char* kNodeTensor = "trees/Node";
constexpr const char* kTreeTensor = "trees/Tree";

// Integer ids of a column of the tree dump; a column that holds anything else is an error.
std::vector<std::int64_t> ids_of(const TensorValue& value, const char* tensor, std::int64_t step) {
  if (value.is_string() || !is_real_numeric(value.dtype())) {
    throw RulestreamError("tensor " + std::string(tensor) + " at step " + std::to_string(step) +
                          " holds " + std::string(dtype_name(value.dtype())) +
                          " values, not node ids");
  }
  std::vector<std::int64_t> ids;
  ids.reserve(static_cast<std::size_t>(value.size()));
  for (std::int64_t i = 0; i < value.size(); ++i) {
    const double id = value.as_double(i);
    if (!std::isfinite(id) || id < 0) {
      throw RulestreamError("tensor " + std::string(tensor) + " at step " + std::to_string(step) +
                            ": element " + std::to_string(i) + " is " + format_figure(id) +
                            ", not an id");
    }
    ids.push_back(static_cast<std::int64_t>(id));
  }
  return ids;
}

}  // namespace

TreeDepthRule::TreeDepthRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)), options_(options) {}

RuleSpec tree_depth_spec() {
  using Options = TreeDepthRule::Options;
  RuleSpec spec;
  spec.name = "TreeDepth";
  spec.aliases = {"tree_depth"};
  spec.description = "XGBoost trees that do not grow as deep as expected";
  spec.parameters = {{"depth", "float", "4",
                      "fires when a tree's depth, log2 of its largest node id, is below this"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("TreeDepth", parameters);
    Options options;
    options.depth = reader.number("depth", options.depth);
    if (options.depth < 0.0) throw reader.invalid("depth", "must not be negative");
    reader.finish();
    return std::unique_ptr<Rule>(new TreeDepthRule(context.base_trial, options));
  };
  return spec;
}

RequiredTensors TreeDepthRule::required_tensors() const {
  return {.names = {kNodeTensor, kTreeTensor}};
}

bool TreeDepthRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  // Throws TensorUnavailableForStep at steps that saved no tree: skipped, as in smdebug.
  const auto nodes = ids_of(trial.tensor(kNodeTensor).value(step), kNodeTensor, step);
  std::vector<std::int64_t> trees(nodes.size(), 0);
  if (trial.has_tensor(kTreeTensor)) {
    try {
      auto saved = ids_of(trial.tensor(kTreeTensor).value(step), kTreeTensor, step);
      if (saved.size() == nodes.size()) trees = std::move(saved);
    } catch (const TensorUnavailableForStep&) {
      // Node ids without tree ids: one tree.
    }
  }

  std::map<std::int64_t, std::int64_t> largest_node;  // tree -> largest node id
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    auto [it, inserted] = largest_node.try_emplace(trees[i], nodes[i]);
    if (!inserted) it->second = std::max(it->second, nodes[i]);
  }

  Finding finding;
  for (const auto& [tree, node] : largest_node) {
    const double depth = node > 0 ? std::log2(static_cast<double>(node)) : 0.0;
    if (depth >= options_.depth) continue;
    if (finding.figures.empty()) finding.tensors.push_back(kNodeTensor);
    finding.figures.push_back({"tree", static_cast<double>(tree), kNodeTensor});
    finding.figures.push_back({"largest_node_id", static_cast<double>(node), kNodeTensor});
    finding.figures.push_back({"depth", depth, kNodeTensor});
    if (finding.message.empty()) {
      finding.message = "tree " + std::to_string(tree) + " has depth " + format_figure(depth) +
                        " (log2 of its largest node id " + std::to_string(node) +
                        ") < expected depth " + format_figure(options_.depth);
    }
    if (finding.figures.size() >= 3 * kMaxReportedTensors) break;
  }
  if (finding.figures.empty()) return false;
  const std::size_t shallow = finding.figures.size() / 3;
  if (shallow > 1) {
    finding.message += " (and " + std::string(shallow >= kMaxReportedTensors ? "at least " : "") +
                       std::to_string(shallow - 1) + " more shallow " +
                       (shallow == 2 ? "tree" : "trees") + ")";
  }
  finding.figures.push_back({"threshold", options_.depth, std::nullopt});
  report(std::move(finding));
  return true;
}

}  // namespace rulestream
