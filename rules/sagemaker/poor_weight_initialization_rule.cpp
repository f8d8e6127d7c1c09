#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/exceptions.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/support/percentiles.hpp"
#include "rules/support/real_values.hpp"
#include "rules/support/rule_text.hpp"
#include "rules/support/tensor_selection.hpp"
#include "rules/support/training_steps.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream {

// SageMaker's PoorWeightInitialization (seed 002). Looks only at the first `steps` training
// steps (TRAIN mode steps 0 .. steps-1, rules/support/training_steps.hpp) and fires at such a step
// when any of three signs of a bad initialisation shows:
//  - activation inputs (activation_inputs_regex) have commensurate variances no more: the
//    largest variance among the layers saved at the step is more than `threshold` times the
//    smallest (a zero smallest variance against a non-zero largest counts as infinite);
//  - gradients barely spread: for some tensor of the `gradients` collection, the distance
//    between its 5th and 95th percentiles (numpy's linear interpolation) is below
//    distribution_range;
//  - the loss does not converge: a scalar of the `losses` collection has not gone below its
//    lowest value so far for `patience` training steps.
class PoorWeightInitializationRule final : public Rule {
 public:
  struct Options {
    std::vector<std::string> activation_inputs_regex{".*relu_input"};
    double threshold = 10.0;
    double distribution_range = 0.001;
    std::int64_t patience = 5;
    double steps = 10;
  };

  PoorWeightInitializationRule(Trial base_trial, Options options);

  std::string_view name() const override { return "PoorWeightInitialization"; }
  bool invoke_at_step(std::int64_t step) override;
  RequiredTensors required_tensors() const override;

  const Options& options() const { return options_; }

 private:
  // The lowest loss seen so far and the training step it was seen at.
  struct BestLoss {
    double loss = 0.0;
    std::int64_t train_step = 0;
  };

  void check_activation_variances(std::int64_t step, Finding& finding,
                                  std::vector<std::string>& reasons) const;
  void check_gradient_spread(std::int64_t step, Finding& finding,
                             std::vector<std::string>& reasons) const;
  void check_loss_progress(std::int64_t step, std::int64_t train_step, Finding& finding,
                           std::vector<std::string>& reasons);

  Options options_;
  TensorSelection activation_inputs_;
  std::map<std::string, BestLoss> best_loss_;
};

namespace {

// About as many tasks as a step's gradients are split into for their spreads.
constexpr std::size_t kGradientTasks = 64;

const TensorSelection& gradients() {
  static const TensorSelection selection{.collections = {"gradients"}};
  return selection;
}

const TensorSelection& loss_tensors() {
  static const TensorSelection selection{.collections = {"losses"}};
  return selection;
}

std::optional<TensorValue> value_at(const Trial& trial, const std::string& name,
                                    std::int64_t step) {
  try {
    return trial.tensor(name).value(step);
  } catch (const TensorUnavailableForStep&) {
    return std::nullopt;  // saved only as reductions at this step
  }
}

}  // namespace

PoorWeightInitializationRule::PoorWeightInitializationRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)),
      options_(std::move(options)),
      activation_inputs_{.regexes = options_.activation_inputs_regex} {}

RuleSpec poor_weight_initialization_spec() {
  using Options = PoorWeightInitializationRule::Options;
  RuleSpec spec;
  spec.name = "PoorWeightInitialization";
  spec.aliases = {"poor_weight_initialization"};
  spec.description =
      "early steps with uneven activation variances, narrow gradients or a stuck loss";
  spec.parameters = {
      {"activation_inputs_regex", "regex list", ".*relu_input",
       "regexes of the activation input tensors whose variances are compared across layers"},
      {"threshold", "float", "10.0",
       "fires when the largest activation input variance exceeds the smallest this many times"},
      {"distribution_range", "float", "0.001",
       "fires when a gradient's 5th-95th percentile range is below this"},
      {"patience", "int", "5", "fires when the loss has not reached a new low for this many steps"},
      {"steps", "float", "10", "the number of first training steps the rule analyses"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("PoorWeightInitialization", parameters);
    Options options;
    options.activation_inputs_regex =
        reader.regex_list("activation_inputs_regex", options.activation_inputs_regex);
    options.threshold = reader.number("threshold", options.threshold);
    if (options.threshold < 1.0) throw reader.invalid("threshold", "must be at least 1 (a ratio)");
    options.distribution_range = reader.number("distribution_range", options.distribution_range);
    if (options.distribution_range < 0.0) {
      throw reader.invalid("distribution_range", "must not be negative");
    }
    options.patience = reader.integer("patience", options.patience);
    if (options.patience < 1) throw reader.invalid("patience", "must be at least 1");
    options.steps = reader.number("steps", options.steps);
    if (options.steps <= 0.0) throw reader.invalid("steps", "must be positive");
    reader.finish();
    return std::unique_ptr<Rule>(
        new PoorWeightInitializationRule(context.base_trial, std::move(options)));
  };
  return spec;
}

RequiredTensors PoorWeightInitializationRule::required_tensors() const {
  return {.regexes = options_.activation_inputs_regex, .collections = {"gradients", "losses"}};
}

void PoorWeightInitializationRule::check_activation_variances(
    std::int64_t step, Finding& finding, std::vector<std::string>& reasons) const {
  const Trial& trial = base_trial();
  struct Layer {
    std::string name;
    double variance = 0.0;
  };
  std::optional<Layer> lowest;
  std::optional<Layer> highest;
  for (const TensorRef& ref : activation_inputs_.tensor_refs(trial, step)) {
    const std::string& name = ref.name();
    double variance = 0.0;
    try {
      variance = trial.tensor(ref).reduction_value(step, Reduction::Variance).as_double();
    } catch (const TensorUnavailableForStep&) {
      continue;
    } catch (const ReductionUnsupported&) {
      continue;
    }
    if (!std::isfinite(variance)) continue;
    if (!lowest || variance < lowest->variance) lowest = Layer{name, variance};
    if (!highest || variance > highest->variance) highest = Layer{name, variance};
  }
  if (!lowest || lowest->name == highest->name || highest->variance == 0.0) return;
  const double ratio = lowest->variance == 0.0 ? std::numeric_limits<double>::infinity()
                                               : highest->variance / lowest->variance;
  if (ratio <= options_.threshold) return;
  finding.tensors.push_back(highest->name);
  finding.tensors.push_back(lowest->name);
  finding.figures.push_back({"variance", highest->variance, highest->name});
  finding.figures.push_back({"variance", lowest->variance, lowest->name});
  finding.figures.push_back({"variance_ratio", ratio, std::nullopt});
  finding.figures.push_back({"threshold", options_.threshold, std::nullopt});
  reasons.push_back("activation input variance of " + highest->name + " (" +
                    format_figure(highest->variance) + ") is " + format_figure(ratio) +
                    " times that of " + lowest->name + " (" + format_figure(lowest->variance) +
                    "), more than threshold " + format_figure(options_.threshold));
}

void PoorWeightInitializationRule::check_gradient_spread(std::int64_t step, Finding& finding,
                                                         std::vector<std::string>& reasons) const {
  const Trial& trial = base_trial();
  const std::vector<TensorRef> refs = gradients().tensor_refs(trial, step);
  // Each gradient's spread is two selections over all its values (a large layer's are millions),
  // and each depends on that gradient alone: they are found on as many threads as the rule's
  // pipeline has (isolated: a thread waiting for them takes no unrelated work), then compared in
  // name order as one thread would.
  // A few gradients a task when they are many (a small gradient's percentiles take microseconds),
  // one each when they are few (a large layer's take milliseconds).
  std::vector<std::optional<double>> ranges(refs.size());
  const auto spread_of = [&](std::size_t i) -> std::optional<double> {
    const auto value = value_at(trial, refs[i].name(), step);
    if (!value) return std::nullopt;
    auto elements = real_values(*value);
    if (!elements || elements->size() < 2) return std::nullopt;
    if (std::any_of(elements->begin(), elements->end(), [](double x) { return std::isnan(x); })) {
      return std::nullopt;  // numpy's percentile of anything with NaN is NaN: not judged
    }
    const auto [p5, p95] = percentile_pair(*elements, 5.0, 95.0);
    return p95 - p5;
  };
  for_ranges_in_parallel(refs.size(), std::max<std::size_t>(1, refs.size() / kGradientTasks),
                         [&](std::size_t begin, std::size_t end) {
                           for (std::size_t i = begin; i != end; ++i) ranges[i] = spread_of(i);
                         });
  std::optional<std::string> narrowest;
  double narrowest_range = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < refs.size(); ++i) {
    if (ranges[i] && *ranges[i] < narrowest_range) {
      narrowest_range = *ranges[i];
      narrowest = refs[i].name();
    }
  }
  if (!narrowest || !(narrowest_range < options_.distribution_range)) return;
  finding.tensors.push_back(*narrowest);
  finding.figures.push_back({"percentile_5_to_95", narrowest_range, *narrowest});
  finding.figures.push_back({"distribution_range", options_.distribution_range, std::nullopt});
  reasons.push_back("gradient " + *narrowest + " spans only " + format_figure(narrowest_range) +
                    " from its 5th to its 95th percentile, less than distribution_range " +
                    format_figure(options_.distribution_range));
}

void PoorWeightInitializationRule::check_loss_progress(std::int64_t step, std::int64_t train_step,
                                                       Finding& finding,
                                                       std::vector<std::string>& reasons) {
  const Trial& trial = base_trial();
  for (const std::string& name : loss_tensors().tensor_refs(trial, step)) {
    const auto value = value_at(trial, name, step);
    if (!value || value->size() != 1 || !is_real_numeric(value->dtype())) continue;
    const double loss = value->as_double(0);
    if (std::isnan(loss)) continue;
    const auto [best, first] = best_loss_.try_emplace(name, BestLoss{loss, train_step});
    if (first) continue;
    if (loss < best->second.loss) {
      best->second = BestLoss{loss, train_step};
      continue;
    }
    const std::int64_t stalled = train_step - best->second.train_step;
    if (stalled < options_.patience) continue;
    finding.tensors.push_back(name);
    finding.figures.push_back({"loss", loss, name});
    finding.figures.push_back({"best_loss", best->second.loss, name});
    finding.figures.push_back({"steps_without_improvement", static_cast<double>(stalled), name});
    finding.figures.push_back({"patience", static_cast<double>(options_.patience), std::nullopt});
    reasons.push_back("loss " + name + " " + format_figure(loss) + " has not gone below " +
                      format_figure(best->second.loss) + " (TRAIN step " +
                      std::to_string(best->second.train_step) + ") for " + std::to_string(stalled) +
                      " steps, patience " + std::to_string(options_.patience));
  }
}

bool PoorWeightInitializationRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  if (!is_training_step(trial, step)) return false;
  const std::int64_t train_step = trial.mode_step(step).value_or(step);
  if (static_cast<double>(train_step) >= options_.steps) {
    done_reading_values();  // past the first steps: the pipeline need keep no values for it
    return false;
  }

  Finding finding;
  std::vector<std::string> reasons;
  check_activation_variances(step, finding, reasons);
  check_gradient_spread(step, finding, reasons);
  check_loss_progress(step, train_step, finding, reasons);
  if (reasons.empty()) return false;

  finding.message = "poor initialisation at TRAIN step " + std::to_string(train_step) + ": ";
  for (std::size_t i = 0; i < reasons.size(); ++i) {
    finding.message += (i == 0 ? "" : "; ") + reasons[i];
  }
  report(std::move(finding));
  return true;
}

}  // namespace rulestream
