#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/model/exceptions.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/sagemaker/histogram_figure_rule.hpp"
#include "rules/support/rule_text.hpp"
#include "rules/support/tensor_selection.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream {

// SageMaker's TensorVariance (seed 002): fires at a step when a selected tensor saved at that
// step has a variance above max_threshold or below min_threshold. The variance is smdebug's
// reduction_value(step, "variance"): the saved reduction when the job saved one, else numpy's
// population variance of the values. Tensors of fewer than two elements have no spread to
// speak of and are skipped, as are tensors whose variance cannot be had (strings, NaN).
// Tensors come from collection_names and tensor_regex (their union), every tensor when neither
// is given. Both thresholds default to None, but at least one must be set: a TensorVariance
// without either could never fire.
class TensorVarianceRule final : public Rule {
 public:
  struct Options {
    TensorSelection selection;  // collection_names, tensor_regex
    std::optional<double> max_threshold;
    std::optional<double> min_threshold;
  };

  TensorVarianceRule(Trial base_trial, Options options);

  std::string_view name() const override { return "TensorVariance"; }
  bool invoke_at_step(std::int64_t step) override;
  // Each step is judged on its own values alone.
  bool evaluates_steps_independently() const override { return true; }
  RequiredTensors required_tensors() const override { return options_.selection.required(false); }

  const Options& options() const { return options_; }

 private:
  Options options_;
};

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

RuleSpec tensor_variance_spec() {
  using Options = TensorVarianceRule::Options;
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
