#include "rules/sagemaker/all_zero_rule.hpp"

#include <optional>

#include "rules/builtin_rules.hpp"
#include "rules/support/rule_text.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream {

AllZeroRule::AllZeroRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)), options_(std::move(options)) {}

RuleSpec all_zero_spec() {
  using Options = AllZeroRule::Options;
  RuleSpec spec;
  spec.name = "AllZero";
  spec.aliases = {"all_zero"};
  spec.description = "tensors whose values are all (or mostly) zero";
  spec.parameters = {
      TensorSelection::collections_parameter(),
      TensorSelection::regexes_parameter(),
      {"threshold", "float", "100", "percentage of zero values at which the rule fires"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("AllZero", parameters);
    Options options;
    options.selection = TensorSelection::read(reader, options.selection);
    options.threshold = reader.percentage("threshold", options.threshold);
    reader.finish();
    return std::unique_ptr<Rule>(new AllZeroRule(context.base_trial, std::move(options)));
  };
  return spec;
}

bool AllZeroRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  Finding finding;
  for (const TensorRef& ref : options_.selection.tensor_refs(trial, step)) {
    const std::string& name = ref.name();
    const std::optional<ElementCounts> counts = saved_element_counts(trial.tensor(ref), step);
    if (!counts) continue;  // saved only as reductions at this step, or not numbers
    if (!counts->zeros || counts->elements == 0) continue;  // bool tensors are not numbers
    const double percent =
        static_cast<double>(*counts->zeros) * 100.0 / static_cast<double>(counts->elements);
    if (percent < options_.threshold) continue;
    finding.tensors.push_back(name);
    finding.figures.push_back({"zero_percent", percent, name});
    if (finding.tensors.size() == kMaxReportedTensors) break;
  }
  if (finding.tensors.empty()) return false;

  finding.figures.push_back({"threshold", options_.threshold, std::nullopt});
  finding.message = finding.tensors.front() + " is " + format_figure(finding.figures[0].value) +
                    "% zeros >= threshold " + format_figure(options_.threshold) + "%" +
                    more_tensors_suffix(finding);
  report(std::move(finding));
  return true;
}

}  // namespace rulestream
