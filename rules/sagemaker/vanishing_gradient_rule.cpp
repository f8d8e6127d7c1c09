#include "rules/sagemaker/vanishing_gradient_rule.hpp"

#include "core/model/exceptions.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/sagemaker/histogram_figure_rule.hpp"
#include "rules/support/rule_text.hpp"
#include "rules/support/tensor_selection.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream {
namespace {

const TensorSelection& gradients() {
  static const TensorSelection selection{.collections = {"gradients"}};
  return selection;
}

}  // namespace

VanishingGradientRule::VanishingGradientRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)), options_(options) {}

RuleSpec vanishing_gradient_spec() {
  using Options = VanishingGradientRule::Options;
  RuleSpec spec;
  spec.name = "VanishingGradient";
  spec.aliases = {"vanishing_gradient"};
  spec.description = "gradients whose mean absolute value drops below a threshold";
  spec.parameters = {{"threshold", "float", "0.0000001",
                      "fires when a gradient's mean absolute value is below this"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("VanishingGradient", parameters);
    Options options;
    options.threshold = reader.number("threshold", options.threshold);
    reader.finish();
    return std::unique_ptr<Rule>(new VanishingGradientRule(context.base_trial, options));
  };
  // On a TensorBoard logdir: the mean absolute value of gradient histograms (estimated from
  // their buckets), each value judged as the rule judges a gradient at a step.
  spec.create_series = [](const RuleParameters& parameters) -> std::shared_ptr<SeriesRule> {
    ParameterReader reader("VanishingGradient", parameters);
    const double threshold = reader.number("threshold", Options{}.threshold);
    reader.finish();
    return std::make_shared<HistogramFigureRule>(
        HistogramFigureRule::Options{.rule = "VanishingGradient",
                                     .figure = "abs_mean",
                                     .role = SeriesRole::Gradient,
                                     .regexes = {},
                                     .below = threshold,
                                     .above = std::nullopt});
  };
  return spec;
}

bool VanishingGradientRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  Finding finding;
  for (const TensorRef& ref : gradients().tensor_refs(trial)) {
    const std::string& name = ref.name();
    double abs_mean = 0.0;
    try {
      abs_mean = trial.tensor(ref)
                     .reduction_value(step, Reduction::Mean, Mode::Global, {}, true)
                     .as_double();
    } catch (const TensorUnavailableForStep&) {
      // smdebug returns at the first vanishing gradient, so a gradient missing after it cannot
      // skip the step; one missing before it does (the exception propagates).
      if (!finding.tensors.empty()) break;
      throw;
    }
    if (abs_mean < options_.threshold) {
      finding.tensors.push_back(name);
      finding.figures.push_back({"abs_mean", abs_mean, name});
      if (finding.tensors.size() == kMaxReportedTensors) break;
    }
  }
  if (finding.tensors.empty()) return false;

  finding.figures.push_back({"threshold", options_.threshold, std::nullopt});
  const Figure& first = finding.figures.front();
  finding.message = *first.tensor + " abs mean " + format_figure(first.value) + " < threshold " +
                    format_figure(options_.threshold) + more_tensors_suffix(finding);
  report(std::move(finding));
  return true;
}

RequiredTensors VanishingGradientRule::required_tensors() const {
  return gradients().required(false);
}

}  // namespace rulestream
