#include "rules/overtraining_rule.hpp"

#include "rules/loss_series.hpp"
#include "rules/rule_text.hpp"
#include "rules/tensor_selection.hpp"

namespace rulestream {
namespace {

const TensorSelection& losses() {
  static const TensorSelection selection{.collections = {"losses"}};
  return selection;
}

}  // namespace

OvertrainingRule::OvertrainingRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)), options_(options) {}

RuleSpec OvertrainingRule::spec() {
  RuleSpec spec;
  spec.name = "Overtraining";
  spec.aliases = {"overtraining"};
  spec.description = "training that goes on while training or validation loss stopped improving";
  spec.parameters = {
      {"patience_train", "int", "5",
       "TRAIN steps without a new optimum before training loss counts as not improving"},
      {"patience_validation", "int", "10",
       "EVAL steps without a new optimum before validation loss counts as not improving"},
      {"delta", "float", "0.01", "how much a loss must fall below the optimum to be a new one"}};
  spec.create = [](const RuleContext& context, const RuleParameters& parameters) {
    ParameterReader reader("Overtraining", parameters);
    Options options;
    options.patience_train = reader.integer("patience_train", options.patience_train);
    if (options.patience_train < 1) throw reader.invalid("patience_train", "must be at least 1");
    options.patience_validation =
        reader.integer("patience_validation", options.patience_validation);
    if (options.patience_validation < 1) {
      throw reader.invalid("patience_validation", "must be at least 1");
    }
    options.delta = reader.number("delta", options.delta);
    if (options.delta < 0.0) throw reader.invalid("delta", "must not be negative");
    reader.finish();
    return std::unique_ptr<Rule>(new OvertrainingRule(context.base_trial, options));
  };
  return spec;
}

RequiredTensors OvertrainingRule::required_tensors() const {
  return losses().required();
}

bool OvertrainingRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  const auto mode = train_or_eval(trial, step);
  if (!mode) return false;
  const std::int64_t mode_step = trial.mode_step(step).value_or(step);
  const bool train = *mode == Mode::Train;
  const std::int64_t patience = train ? options_.patience_train : options_.patience_validation;
  const std::string series = train ? "training" : "validation";

  Finding finding;
  for (const LossObservation& observed : losses_at(trial, losses().names(trial, step), step)) {
    const auto [it, first] =
        optima_.try_emplace({observed.tensor, *mode}, Optimum{observed.loss, mode_step, step});
    Optimum& optimum = it->second;
    if (first || observed.loss < optimum.loss - options_.delta) {
      optimum = {observed.loss, mode_step, step};
      continue;
    }
    const std::int64_t stale = mode_step - optimum.mode_step;
    if (stale < patience || finding.tensors.size() >= kMaxReportedTensors) continue;

    finding.tensors.push_back(observed.tensor);
    finding.figures.push_back({"loss", observed.loss, observed.tensor});
    finding.figures.push_back({"best_loss", optimum.loss, observed.tensor});
    finding.figures.push_back(
        {"best_step", static_cast<double>(optimum.global_step), observed.tensor});
    finding.figures.push_back(
        {"steps_without_improvement", static_cast<double>(stale), observed.tensor});
    if (finding.message.empty()) {
      finding.message = observed.tensor + ": " + series + " loss " + format_figure(observed.loss) +
                        " has not improved by more than delta " + format_figure(options_.delta) +
                        " on its best " + format_figure(optimum.loss) + " (step " +
                        std::to_string(optimum.global_step) + ") for " + std::to_string(stale) +
                        " " + std::string(mode_name(*mode)) + " steps >= patience " +
                        std::to_string(patience);
    }
  }
  if (finding.tensors.empty()) return false;
  finding.figures.push_back({"patience", static_cast<double>(patience), std::nullopt});
  finding.figures.push_back({"delta", options_.delta, std::nullopt});
  finding.message += more_tensors_suffix(finding);
  report(std::move(finding));
  return true;
}

}  // namespace rulestream
