#include "rules/exploding_tensor_rule.hpp"

#include <optional>

#include "pipeline/trial/tensor.hpp"
#include "rules/rule_text.hpp"

namespace rulestream {

ExplodingTensorRule::ExplodingTensorRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)), options_(std::move(options)) {}

RuleSpec ExplodingTensorRule::spec() {
  RuleSpec spec;
  spec.name = "ExplodingTensor";
  spec.aliases = {"exploding_tensor"};
  spec.description = "tensors holding NaN or infinite values";
  spec.parameters = {TensorSelection::collections_parameter(),
                     TensorSelection::regexes_parameter(),
                     {"only_nan", "bool", "False", "True: fire on NaN only, not on infinities"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("ExplodingTensor", parameters);
    Options options;
    options.selection = TensorSelection::read(reader, options.selection);
    options.only_nan = reader.boolean("only_nan", options.only_nan);
    reader.finish();
    return std::unique_ptr<Rule>(new ExplodingTensorRule(context.base_trial, std::move(options)));
  };
  return spec;
}

bool ExplodingTensorRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  Finding finding;
  for (const TensorRef& ref : options_.selection.tensor_refs(trial, step)) {
    const std::string& name = ref.name();
    const std::optional<ElementCounts> counts = saved_element_counts(trial.tensor(ref), step);
    if (!counts) continue;        // saved only as reductions at this step, or not numbers
    if (!counts->nans) continue;  // integers and bool hold neither NaN nor Inf
    const bool exploded = *counts->nans > 0 || (!options_.only_nan && *counts->infs > 0);
    if (!exploded) continue;
    finding.tensors.push_back(name);
    finding.figures.push_back({"nan_count", static_cast<double>(*counts->nans), name});
    if (!options_.only_nan) {
      finding.figures.push_back({"inf_count", static_cast<double>(*counts->infs), name});
    }
    finding.figures.push_back({"size", static_cast<double>(counts->elements), name});
    if (finding.tensors.size() == kMaxReportedTensors) break;
  }
  if (finding.tensors.empty()) return false;

  const auto figure = [&](std::size_t index) {
    return std::to_string(static_cast<std::int64_t>(finding.figures[index].value));
  };
  finding.message = finding.tensors.front() + " has " + figure(0) + " NaN";
  if (!options_.only_nan) finding.message += " and " + figure(1) + " infinite";
  finding.message +=
      " of " + figure(options_.only_nan ? 1 : 2) + " values" + more_tensors_suffix(finding);
  report(std::move(finding));
  return true;
}

}  // namespace rulestream
