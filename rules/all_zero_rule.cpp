#include "rules/all_zero_rule.hpp"

#include "pipeline/model/exceptions.hpp"
#include "pipeline/trial/tensor.hpp"
#include "rules/rule_text.hpp"

namespace rulestream {

AllZeroRule::AllZeroRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)),
      options_(std::move(options)),
      selection_{options_.collection_names, options_.tensor_regex} {}

RuleSpec AllZeroRule::spec() {
  RuleSpec spec;
  spec.name = "AllZero";
  spec.aliases = {"all_zero"};
  spec.description = "tensors whose values are all (or mostly) zero";
  spec.parameters = {
      {"collection_names", "list", "", "collections whose tensors are inspected"},
      {"tensor_regex", "regex list", "",
       "regexes of tensor names to inspect (with collections: union)"},
      {"threshold", "float", "100", "percentage of zero values at which the rule fires"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("AllZero", parameters);
    Options options;
    options.collection_names = reader.list("collection_names", options.collection_names);
    options.tensor_regex = reader.regex_list("tensor_regex", options.tensor_regex);
    options.threshold = reader.percentage("threshold", options.threshold);
    reader.finish();
    return std::unique_ptr<Rule>(new AllZeroRule(context.base_trial, std::move(options)));
  };
  return spec;
}

bool AllZeroRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  Finding finding;
  for (const TensorRef& ref : selection_.tensor_refs(trial, step)) {
    const std::string& name = ref.name();
    ElementCounts counts;
    try {
      counts = trial.tensor(ref).element_counts(step);
    } catch (const TensorUnavailableForStep&) {
      continue;  // saved only as reductions at this step, or not numbers: no elements to count
    }
    if (!counts.zeros || counts.elements == 0) continue;  // bool tensors are not numbers
    const double percent =
        static_cast<double>(*counts.zeros) * 100.0 / static_cast<double>(counts.elements);
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
