#include "rules/sagemaker/tensor_variance_rule.hpp"

#include <cmath>

#include "core/model/exceptions.hpp"
#include "rules/sagemaker/histogram_figure_rule.hpp"
#include "rules/support/rule_text.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream {

TensorVarianceRule::TensorVarianceRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)), options_(std::move(options)) {}

namespace {

TensorVarianceRule::Options read_tensor_variance_options(ParameterReader& reader) {
  TensorVarianceRule::Options options;
  options.selection = TensorSelection::read(reader, options.selection);
  options.max_threshold = reader.optional_number("max_threshold");
  options.min_threshold = reader.optional_number("min_threshold");
  if (!options.max_threshold && !options.min_threshold) {
    throw RuleConfigError(
        "rule TensorVariance: parameters max_threshold and min_threshold are both None: set "
        "at least one, or the rule can never fire");
  }
  if (options.max_threshold && options.min_threshold &&
      *options.min_threshold > *options.max_threshold) {
    throw reader.invalid("min_threshold", "is above max_threshold \"" +
                                              format_figure(*options.max_threshold) + "\"");
  }
  return options;
}

}  // namespace

RuleSpec TensorVarianceRule::spec() {
  RuleSpec spec;
  spec.name = "TensorVariance";
  spec.aliases = {"tensor_variance"};
  spec.description = "tensors whose variance is above max_threshold or below min_threshold";
  spec.parameters = {TensorSelection::collections_parameter(),
                     TensorSelection::regexes_parameter(),
                     {"max_threshold", "float", "",
                      "fires when a variance is above this (set this or min_threshold)"},
                     {"min_threshold", "float", "",
                      "fires when a variance is below this (set this or max_threshold)"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("TensorVariance", parameters);
    Options options = read_tensor_variance_options(reader);
    reader.finish();
    return std::unique_ptr<Rule>(new TensorVarianceRule(context.base_trial, std::move(options)));
  };
  // On a TensorBoard logdir: the variance of every histogram (tensor_regex: of those whose tag
  // it finds), from sum and sum_squares (a [k,3] histogram tensor carries no sum of squares).
  spec.create_series = [](const RuleParameters& parameters) -> std::shared_ptr<SeriesRule> {
    ParameterReader reader("TensorVariance", parameters);
    const Options options = read_tensor_variance_options(reader);
    reader.finish();
    return std::make_shared<HistogramFigureRule>(
        HistogramFigureRule::Options{.rule = "TensorVariance",
                                     .figure = "variance",
                                     .role = std::nullopt,
                                     .regexes = compile_name_regexes(options.selection.regexes),
                                     .below = options.min_threshold,
                                     .above = options.max_threshold});
  };
  return spec;
}

bool TensorVarianceRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  Finding finding;
  std::string first_bound;
  for (const TensorRef& ref : options_.selection.tensor_refs(trial, step)) {
    const std::string& name = ref.name();
    const Tensor tensor = trial.tensor(ref);
    double variance = 0.0;
    try {
      variance = tensor.reduction_value(step, Reduction::Variance).as_double();
    } catch (const TensorUnavailableForStep&) {
      continue;  // neither the values nor a saved variance at this step
    } catch (const ReductionUnsupported&) {
      continue;  // strings, complex values
    }
    const bool too_high = options_.max_threshold && variance > *options_.max_threshold;
    const bool too_low = options_.min_threshold && variance < *options_.min_threshold;
    if (!too_high && !too_low) continue;
    // A variance needs two elements (a scalar's is 0 by definition, not a narrow spread). Asked
    // only of a variance out of bounds: every tensor is judged at every step, and this is a
    // second lookup of it. The count comes with the reductions; a tensor saved only as
    // reductions tells it by its saved shape, if any (else the saved variance is all there is).
    if (const auto counts = saved_element_counts(tensor, step)) {
      if (counts->elements < 2) continue;
    } else {
      try {
        if (element_count(tensor.shape(step)) < 2) continue;
      } catch (const ShapeUnavailableForStep&) {
      } catch (const TensorUnavailableForStep&) {
        continue;
      }
    }
    finding.tensors.push_back(name);
    finding.figures.push_back({"variance", variance, name});
    if (first_bound.empty()) {
      first_bound = too_high ? " > max_threshold " + format_figure(*options_.max_threshold)
                             : " < min_threshold " + format_figure(*options_.min_threshold);
    }
    if (finding.tensors.size() == kMaxReportedTensors) break;
  }
  if (finding.tensors.empty()) return false;

  if (options_.max_threshold) {
    finding.figures.push_back({"max_threshold", *options_.max_threshold, std::nullopt});
  }
  if (options_.min_threshold) {
    finding.figures.push_back({"min_threshold", *options_.min_threshold, std::nullopt});
  }
  finding.message = finding.tensors.front() + " variance " +
                    format_figure(finding.figures.front().value) + first_bound +
                    more_tensors_suffix(finding);
  report(std::move(finding));
  return true;
}

}  // namespace rulestream
