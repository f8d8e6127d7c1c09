#include "rules/overfit_rule.hpp"

#include <cmath>
#include <utility>

#include "rules/loss_series.hpp"
#include "rules/rule_text.hpp"

namespace rulestream {
namespace {

TensorSelection overfit_selection(const OverfitRule::Options& options) {
  if (!options.tensor_regex.empty()) return {.regexes = options.tensor_regex};
  return {.collections = {"losses"}};
}

}  // namespace

OverfitRule::OverfitRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)),
      options_(std::move(options)),
      selection_(overfit_selection(options_)) {}

RuleSpec OverfitRule::spec() {
  RuleSpec spec;
  spec.name = "Overfit";
  spec.aliases = {"overfit"};
  spec.description = "a validation loss that pulls away above the training loss";
  spec.parameters = {
      {"tensor_regex", "regex list", "",
       "regexes of the loss tensors (none: the collection \"losses\")"},
      {"start_step", "int", "0", "global step from which losses are compared"},
      {"patience", "int", "1",
       "consecutive EVAL steps above ratio_threshold before the model counts as overfit"},
      {"ratio_threshold", "float", "0.1",
       "largest allowed (mean validation - mean training) / mean training loss"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("Overfit", parameters);
    Options options;
    options.tensor_regex = reader.regex_list("tensor_regex", options.tensor_regex);
    options.start_step = reader.integer("start_step", options.start_step);
    if (options.start_step < 0) throw reader.invalid("start_step", "must not be negative");
    options.patience = reader.integer("patience", options.patience);
    if (options.patience < 1) throw reader.invalid("patience", "must be at least 1");
    options.ratio_threshold = reader.number("ratio_threshold", options.ratio_threshold);
    if (options.ratio_threshold < 0.0) {
      throw reader.invalid("ratio_threshold", "must not be negative");
    }
    reader.finish();
    return std::unique_ptr<Rule>(new OverfitRule(context.base_trial, std::move(options)));
  };
  return spec;
}

bool OverfitRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  const auto mode = train_or_eval(trial, step);
  if (!mode || step < options_.start_step) return false;

  Finding finding;
  for (const LossObservation& observed : losses_at(trial, selection_.names(trial, step), step)) {
    Series& series = series_[observed.tensor];
    if (*mode == Mode::Train) {
      if (series.last_mode == Mode::Eval) {  // a new training window after an evaluation pass
        series.train_sum = 0.0;
        series.train_count = 0;
      }
      series.train_sum += observed.loss;
      ++series.train_count;
      series.last_mode = Mode::Train;
      continue;
    }

    if (series.last_mode != Mode::Eval) {  // a new evaluation pass
      if (series.train_count > 0) {
        series.train_mean = series.train_sum / static_cast<double>(series.train_count);
        series.train_window = series.train_count;
      }
      series.eval_sum = 0.0;
      series.eval_count = 0;
    }
    series.eval_sum += observed.loss;
    ++series.eval_count;
    series.last_mode = Mode::Eval;
    if (!series.train_mean || *series.train_mean == 0.0) continue;

    const double validation = series.eval_sum / static_cast<double>(series.eval_count);
    const double training = *series.train_mean;
    const double ratio = (validation - training) / std::fabs(training);
    if (!(ratio > options_.ratio_threshold)) {
      series.exceeded = 0;
      continue;
    }
    if (++series.exceeded < options_.patience) continue;
    if (finding.tensors.size() >= kMaxReportedTensors) continue;

    finding.tensors.push_back(observed.tensor);
    finding.figures.push_back({"validation_mean", validation, observed.tensor});
    finding.figures.push_back({"training_mean", training, observed.tensor});
    finding.figures.push_back({"ratio", ratio, observed.tensor});
    finding.figures.push_back(
        {"steps_above", static_cast<double>(series.exceeded), observed.tensor});
    if (finding.message.empty()) {
      finding.message =
          observed.tensor + ": mean validation loss " + format_figure(validation) + " over " +
          std::to_string(series.eval_count) + " EVAL step(s) vs mean training loss " +
          format_figure(training) + " over the " + std::to_string(series.train_window) +
          " TRAIN step(s) before: ratio " + format_figure(ratio) + " > ratio_threshold " +
          format_figure(options_.ratio_threshold) + " at " + std::to_string(series.exceeded) +
          " EVAL step(s) in a row (patience " + std::to_string(options_.patience) + ")";
    }
  }
  if (finding.tensors.empty()) return false;
  finding.figures.push_back({"ratio_threshold", options_.ratio_threshold, std::nullopt});
  finding.figures.push_back({"patience", static_cast<double>(options_.patience), std::nullopt});
  finding.message += more_tensors_suffix(finding);
  report(std::move(finding));
  return true;
}

}  // namespace rulestream
