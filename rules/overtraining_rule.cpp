#include "rules/overtraining_rule.hpp"

#include <string>
#include <utility>

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
  spec.description =
      "training that goes on after the model stopped improving (window means of training and "
      "validation loss no longer beat their best)";
  spec.parameters = {
      {"patience_train", "int", "5",
       "TRAIN saves per training window; a window whose mean loss is not below the best earlier "
       "one by more than delta means training stopped improving"},
      {"patience_validation", "int", "10",
       "EVAL saves (in whole evaluation passes) per validation window, judged the same way"},
      {"delta", "float", "0.01",
       "how much a window mean must fall below the best one to count as an improvement"}};
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

bool OvertrainingRule::overtrained_after_training_save(LossProgress& progress, double loss,
                                                       std::int64_t step) {
  if (progress.in_evaluation) {  // the evaluation pass before this step has ended
    progress.in_evaluation = false;
    if (progress.validation.open_saves() >= options_.patience_validation) {
      progress.validation.close_window();
    }
  }
  progress.training.add(loss, step);
  if (progress.training.open_saves() >= options_.patience_train) progress.training.close_window();
  return progress.training.stalled() && (!progress.evaluated || progress.validation.stalled());
}

void OvertrainingRule::describe(const std::string& tensor, const LossProgress& progress,
                                Finding& finding) const {
  const auto not_improved = [this](std::string_view series, std::string_view mode,
                                   const WindowMean& latest, const WindowMean& best) {
    return "mean " + std::string(series) + " loss " + format_figure(latest.mean) + " over " +
           std::to_string(latest.saves) + " " + std::string(mode) + " steps (global " +
           std::to_string(latest.first_step) + "-" + std::to_string(latest.last_step) +
           ") is not below the best window mean " + format_figure(best.mean) + " (global " +
           std::to_string(best.first_step) + "-" + std::to_string(best.last_step) +
           ") by more than delta " + format_figure(options_.delta);
  };
  const WindowMean& training = *progress.training.latest();
  const WindowMean& best_training = *progress.training.best();
  finding.tensors.push_back(tensor);
  finding.figures.push_back({"training_mean", training.mean, tensor});
  finding.figures.push_back({"best_training_mean", best_training.mean, tensor});
  std::string message = tensor + ": training goes on while the model stopped improving: " +
                        not_improved("training", "TRAIN", training, best_training);
  if (progress.evaluated) {
    const WindowMean& validation = *progress.validation.latest();
    const WindowMean& best_validation = *progress.validation.best();
    finding.figures.push_back({"validation_mean", validation.mean, tensor});
    finding.figures.push_back({"best_validation_mean", best_validation.mean, tensor});
    message += "; " + not_improved("validation", "EVAL", validation, best_validation);
  }
  if (finding.message.empty()) finding.message = std::move(message);
}

bool OvertrainingRule::invoke_at_step(std::int64_t step) {
  const Trial& trial = base_trial();
  const auto mode = train_or_eval(trial, step);
  if (!mode) return false;

  Finding finding;
  for (const LossObservation& observed : losses_at(trial, losses().names(trial, step), step)) {
    LossProgress& progress = progress_.try_emplace(observed.tensor, options_.delta).first->second;
    if (*mode == Mode::Eval) {
      progress.validation.add(observed.loss, step);
      progress.in_evaluation = true;
      progress.evaluated = true;
      continue;
    }
    if (!overtrained_after_training_save(progress, observed.loss, step)) continue;
    if (finding.tensors.size() < kMaxReportedTensors) describe(observed.tensor, progress, finding);
  }
  if (finding.tensors.empty()) return false;
  finding.figures.push_back(
      {"patience_train", static_cast<double>(options_.patience_train), std::nullopt});
  finding.figures.push_back(
      {"patience_validation", static_cast<double>(options_.patience_validation), std::nullopt});
  finding.figures.push_back({"delta", options_.delta, std::nullopt});
  finding.message += more_tensors_suffix(finding);
  report(std::move(finding));
  return true;
}

}  // namespace rulestream
