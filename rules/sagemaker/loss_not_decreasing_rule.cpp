#include "rules/sagemaker/loss_not_decreasing_rule.hpp"

#include <algorithm>
#include <optional>

#include "core/model/exceptions.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/sagemaker/loss_not_decreasing_series.hpp"
#include "rules/support/rule_text.hpp"
#include "rules/support/saved_scalar.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream {
namespace {

TensorSelection loss_selection(const LossNotDecreasingRule::Options& options) {
  TensorSelection selection = options.selection;
  if (options.use_losses_collection &&
      std::find(selection.collections.begin(), selection.collections.end(), "losses") ==
          selection.collections.end()) {
    selection.collections.insert(selection.collections.begin(), "losses");
  }
  return selection;
}

LossNotDecreasingRule::Options read_loss_not_decreasing_options(ParameterReader& reader) {
  LossNotDecreasingRule::Options options;
  options.selection = TensorSelection::read(reader, options.selection);
  options.use_losses_collection =
      reader.boolean("use_losses_collection", options.use_losses_collection);
  options.num_steps = reader.integer("num_steps", options.num_steps);
  if (options.num_steps < 1) throw reader.invalid("num_steps", "must be at least 1");
  options.diff_percent = reader.number("diff_percent", options.diff_percent);
  if (options.diff_percent < 0.0 || options.diff_percent >= 100.0) {
    throw reader.invalid("diff_percent", "is not a percentage in [0, 100)");
  }
  options.increase_threshold_percent =
      reader.number("increase_threshold_percent", options.increase_threshold_percent);
  if (options.increase_threshold_percent < 0.0) {
    throw reader.invalid("increase_threshold_percent", "must not be negative");
  }
  const std::string mode = reader.text("mode", std::string(mode_name(options.mode)));
  const auto parsed = mode_from_name(mode);
  if (!parsed) throw reader.invalid("mode", "is not a mode (GLOBAL, TRAIN, EVAL or PREDICT)");
  options.mode = *parsed;
  return options;
}

std::string percent_change(double loss, double base) {
  return format_figure((loss - base) / base * 100.0) + "%";
}

}  // namespace

LossNotDecreasingRule::LossNotDecreasingRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)),
      options_(std::move(options)),
      selection_(loss_selection(options_)) {}

RuleSpec loss_not_decreasing_spec() {
  using Options = LossNotDecreasingRule::Options;
  RuleSpec spec;
  spec.name = "LossNotDecreasing";
  spec.aliases = {"loss_not_decreasing"};
  spec.description = "a loss that does not decrease by diff_percent over num_steps";
  spec.parameters = {
      TensorSelection::collections_parameter("collections of further loss tensors"),
      TensorSelection::regexes_parameter("regexes of further loss tensor names"),
      {"use_losses_collection", "bool", "True", "include the tensors of the collection \"losses\""},
      {"num_steps", "int", "10", "compare with the loss at least this many steps before"},
      {"diff_percent", "float", "0.1", "minimum decrease, in percent, between compared steps"},
      {"increase_threshold_percent", "float", "5",
       "a rise above this percentage is reported as a rising loss"},
      {"mode", "string", "GLOBAL", "steps to compare: GLOBAL, TRAIN, EVAL or PREDICT"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("LossNotDecreasing", parameters);
    Options options = read_loss_not_decreasing_options(reader);
    reader.finish();
    return std::unique_ptr<Rule>(new LossNotDecreasingRule(context.base_trial, std::move(options)));
  };
  // On series (TensorBoard): the loss series, and those tensor_regex names; a collection other
  // than `losses` names no series (a logdir has no collections).
  spec.create_series = [](const RuleParameters& parameters) -> std::shared_ptr<SeriesRule> {
    ParameterReader reader("LossNotDecreasing", parameters);
    const Options options = read_loss_not_decreasing_options(reader);
    reader.finish();
    const bool losses =
        options.use_losses_collection ||
        std::find(options.selection.collections.begin(), options.selection.collections.end(),
                  "losses") != options.selection.collections.end();
    return std::make_shared<LossNotDecreasingSeries>(
        SeriesSelection::either(losses ? std::optional(SeriesRole::Loss) : std::nullopt,
                                compile_name_regexes(options.selection.regexes)),
        LossNotDecreasingSeries::Options{
            .num_steps = options.num_steps,
            .diff_percent = options.diff_percent,
            .increase_threshold_percent = options.increase_threshold_percent,
            .mode = options.mode});
  };
  return spec;
}

bool LossNotDecreasingRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  const Mode mode = options_.mode;
  std::int64_t mode_step = step;
  if (mode != Mode::Global) {
    // Steps of other modes are not this rule's business: evaluated, and quiet.
    if (trial.mode(step) != mode) return false;
    mode_step = *trial.mode_step(step);
  }

  Finding finding;
  for (const TensorRef& ref : selection_.tensor_refs(trial, step)) {
    const std::string& name = ref.name();
    const auto last = last_compared_.find(name);
    if (last != last_compared_.end() && mode_step < last->second + options_.num_steps) continue;

    const Tensor tensor = trial.tensor(ref);
    const auto loss = saved_scalar(tensor, mode_step, mode);
    if (!loss) continue;
    // The newest saved step at least num_steps behind.
    const auto base = tensor.prev_steps(mode_step - options_.num_steps, 1, mode);
    if (base.empty()) continue;
    const std::int64_t base_mode_step = base.back();
    const auto base_loss = saved_scalar(tensor, base_mode_step, mode);
    if (!base_loss) continue;

    Comparison comparison;
    comparison.tensor = name;
    comparison.step = step;
    comparison.mode_step = mode_step;
    comparison.base_mode_step = base_mode_step;
    comparison.base_step = trial.global_step(mode, base_mode_step).value_or(base_mode_step);
    comparison.loss = *loss;
    comparison.base_loss = *base_loss;
    comparison.triggered = *loss > *base_loss * (1.0 - options_.diff_percent / 100.0);
    last_compared_[name] = mode_step;
    comparisons_.push_back(comparison);

    if (comparison.triggered && finding.tensors.size() < kMaxReportedTensors) {
      finding.tensors.push_back(name);
      finding.figures.push_back({"loss", *loss, name});
      finding.figures.push_back({"base_loss", *base_loss, name});
      finding.figures.push_back({"base_step", static_cast<double>(comparison.base_step), name});
      if (finding.message.empty()) {
        const bool rising =
            *loss > *base_loss * (1.0 + options_.increase_threshold_percent / 100.0);
        finding.message = name + " " + format_figure(*loss) + " at step " + std::to_string(step) +
                          " vs " + format_figure(*base_loss) + " at step " +
                          std::to_string(comparison.base_step) + ": changed by " +
                          percent_change(*loss, *base_loss) + ", not decreasing by " +
                          format_figure(options_.diff_percent) + "%" +
                          (rising ? " (rising: more than " +
                                        format_figure(options_.increase_threshold_percent) + "%)"
                                  : "");
      }
    }
  }
  if (finding.tensors.empty()) return false;
  finding.figures.push_back({"diff_percent", options_.diff_percent, std::nullopt});
  finding.figures.push_back({"num_steps", static_cast<double>(options_.num_steps), std::nullopt});
  finding.message += more_tensors_suffix(finding);
  report(std::move(finding));
  return true;
}

}  // namespace rulestream
