#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "rules/builtin_rules.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/series_rule.hpp"
#include "rules/support/loss_series.hpp"
#include "rules/support/rule_text.hpp"
#include "rules/support/tensor_selection.hpp"
#include "rules/support/windowed_optimum.hpp"

namespace rulestream {

// SageMaker's Overtraining (seed 002): training goes on after the model stopped improving.
// Each loss tensor (the `losses` collection) has two series, judged on window means rather than
// single batches (WindowedOptimum):
//   - training: consecutive windows of patience_train TRAIN saves;
//   - validation: whole evaluation passes (runs of EVAL saves), a window ending with the pass in
//     which it reaches patience_validation EVAL saves. Passes are never split: the model does not
//     change within a pass, so splitting one would compare batches, not models.
// A window improves when its mean is below the best earlier window mean by more than `delta`.
// The rule fires at a TRAIN step (training goes on) when the latest training window did not
// improve and, once the loss has been saved at EVAL steps, the latest validation window did not
// improve either; a job that has not evaluated is judged on training alone. It keeps firing at
// TRAIN steps until a window of either series improves.
class OvertrainingRule final : public Rule {
 public:
  struct Options {
    std::int64_t patience_train = 5;
    std::int64_t patience_validation = 10;
    double delta = 0.01;
  };

  OvertrainingRule(Trial base_trial, Options options);

  std::string_view name() const override { return "Overtraining"; }
  bool invoke_at_step(std::int64_t step) override;
  RequiredTensors required_tensors() const override;

  const Options& options() const { return options_; }

 private:
  // One loss tensor's two series.
  struct LossProgress {
    explicit LossProgress(double delta) : training(delta), validation(delta) {}
    WindowedOptimum training;
    WindowedOptimum validation;
    bool in_evaluation = false;  // the last save was at an EVAL step
    bool evaluated = false;      // saved at some EVAL step so far
  };

  // Adds a TRAIN save; true when the rule's condition holds for this loss after it.
  bool overtrained_after_training_save(LossProgress& progress, double loss, std::int64_t step);
  void describe(const std::string& tensor, const LossProgress& progress, Finding& finding) const;

  Options options_;
  std::map<std::string, LossProgress> progress_;
};

namespace {

const TensorSelection& losses() {
  static const TensorSelection selection{.collections = {"losses"}};
  return selection;
}

OvertrainingRule::Options read_overtraining_options(ParameterReader& reader) {
  OvertrainingRule::Options options;
  options.patience_train = reader.integer("patience_train", options.patience_train);
  if (options.patience_train < 1) throw reader.invalid("patience_train", "must be at least 1");
  options.patience_validation = reader.integer("patience_validation", options.patience_validation);
  if (options.patience_validation < 1) {
    throw reader.invalid("patience_validation", "must be at least 1");
  }
  options.delta = reader.number("delta", options.delta);
  if (options.delta < 0.0) throw reader.invalid("delta", "must not be negative");
  return options;
}

// "mean training loss 0.5 over 5 TRAIN steps (global 10-14) is not below the best window mean
// 0.49 (global 0-4) by more than delta 0.01".
std::string not_improved(std::string_view series, std::string_view mode, const WindowMean& latest,
                         const WindowMean& best, double delta) {
  return "mean " + std::string(series) + " loss " + format_figure(latest.mean) + " over " +
         std::to_string(latest.saves) + " " + std::string(mode) + " steps (global " +
         std::to_string(latest.first_step) + "-" + std::to_string(latest.last_step) +
         ") is not below the best window mean " + format_figure(best.mean) + " (global " +
         std::to_string(best.first_step) + "-" + std::to_string(best.last_step) +
         ") by more than delta " + format_figure(delta);
}

// On a TensorBoard logdir: each loss's training series judged in windows of patience_train
// values, its validation series (paired by SeriesInfo::group, as Overfit pairs them) in
// windows of whole evaluation passes, exactly as the rule judges TRAIN and EVAL saves. A pass
// is a run of validation values with no training value at a step between them. The rule fires
// at a training value when the training windows stalled and, once the pair has a validation
// value at or before that step, the validation windows stalled too; a GLOBAL loss (no mode in
// its tag or run) is a training series with no pair.
//
// What "before" can mean depends on the order the pipeline reads values in: a run's tags in
// file order (`train/loss` and `eval/loss` of one run interleave by step, as the rule reads
// them), a job's runs one after another, training runs first (Keras' `train/` and
// `validation/`). In the second case a training value is judged on training alone, as the rule
// judges a job that has not evaluated yet: docs/tensorboard.md says so.
//
// A job's series are fed by one thread at a time. A restart (the evaluator rebuilds a state
// from the series' last kMemory values) keeps the best window among those values.
class OvertrainingSeries final : public SeriesRule {
 public:
  explicit OvertrainingSeries(OvertrainingRule::Options options) : options_(options) {}

  std::string_view name() const override { return "Overtraining"; }
  bool watches(const SeriesInfo& series) const override {
    return series.figure.empty() && series.role == SeriesRole::Loss &&
           (series.mode == Mode::Train || series.mode == Mode::Eval || series.mode == Mode::Global);
  }
  std::size_t memory_points() const override { return kMemory; }
  std::string looks_for() const override {
    return "loss series, training and validation (docs/tensorboard.md: which tags)";
  }
  std::vector<std::string> tag_regexes() const override { return {}; }

  std::unique_ptr<SeriesState> start(const SeriesInfo& series) const override {
    const std::string name = series.display_name();
    std::shared_ptr<Pair> pair;
    {
      const std::lock_guard lock(mutex_);
      auto& slot = pairs_[series.group.empty() ? "\n" + name : series.group];
      if (!slot) slot = std::make_shared<Pair>(options_.delta);
      pair = slot;
    }
    if (series.mode == Mode::Eval) {
      return std::make_unique<Validation>(std::move(pair), options_);
    }
    return std::make_unique<Training>(name, std::move(pair), options_);
  }

 private:
  static constexpr std::size_t kMemory = 1024;

  // What the two series of a pair share: the validation windows (rebuilt with the validation
  // series' state at a restart) and the training steps, which end evaluation passes.
  struct Pair {
    explicit Pair(double delta) : validation(delta) {}
    WindowedOptimum validation;
    bool in_evaluation = false;  // the last validation value has no training value after it
    std::optional<std::int64_t> first_validation;
    std::optional<std::int64_t> last_validation;
    std::set<std::int64_t> train_steps;  // the last kMemory

    // The open evaluation pass has ended: its window closes once it holds enough values.
    void end_pass(std::int64_t patience_validation) {
      in_evaluation = false;
      if (validation.open_saves() >= patience_validation) validation.close_window();
    }
  };

  class Validation final : public SeriesState {
   public:
    // Made at the series' start and at a restart, before its kept values are fed again: the
    // pair's validation windows start over (the training steps stay).
    Validation(std::shared_ptr<Pair> pair, const OvertrainingRule::Options& options)
        : pair_(std::move(pair)), options_(options) {
      pair_->validation = WindowedOptimum(options.delta);
      pair_->in_evaluation = false;
      pair_->first_validation.reset();
      pair_->last_validation.reset();
    }

    bool add(std::int64_t step, double loss, Finding& finding) override {
      static_cast<void>(finding);
      Pair& pair = *pair_;
      // Training values read before this series (a job's training run first) end passes too.
      if (pair.in_evaluation && pair.last_validation) {
        const auto next_training = pair.train_steps.upper_bound(*pair.last_validation);
        if (next_training != pair.train_steps.end() && *next_training < step) {
          pair.end_pass(options_.patience_validation);
        }
      }
      pair.validation.add(loss, step);
      pair.in_evaluation = true;
      pair.last_validation = step;
      if (!pair.first_validation) pair.first_validation = step;
      return false;
    }

   private:
    std::shared_ptr<Pair> pair_;
    OvertrainingRule::Options options_;
  };

  class Training final : public SeriesState {
   public:
    Training(std::string name, std::shared_ptr<Pair> pair, const OvertrainingRule::Options& options)
        : name_(std::move(name)),
          pair_(std::move(pair)),
          options_(options),
          windows_(options.delta) {}

    bool add(std::int64_t step, double loss, Finding& finding) override {
      Pair& pair = *pair_;
      pair.train_steps.erase(pair.train_steps.lower_bound(step), pair.train_steps.end());
      pair.train_steps.insert(step);
      if (pair.train_steps.size() > kMemory) pair.train_steps.erase(pair.train_steps.begin());
      // A training value after validation values ends their pass (values read in step order).
      if (pair.in_evaluation && pair.last_validation && *pair.last_validation < step) {
        pair.end_pass(options_.patience_validation);
      }
      windows_.add(loss, step);
      if (windows_.open_saves() >= options_.patience_train) windows_.close_window();
      if (!windows_.stalled()) return false;
      // Judged on training alone until a validation value at or before this step (the rule's
      // "a job that has not evaluated"); after, on both.
      const bool evaluated = pair.first_validation && *pair.first_validation <= step;
      if (evaluated && !pair.validation.stalled()) return false;

      finding.tensors = {name_};
      finding.figures = {{"training_mean", windows_.latest()->mean, name_},
                         {"best_training_mean", windows_.best()->mean, name_}};
      finding.message = name_ + ": training goes on while the model stopped improving: " +
                        not_improved("training", "training", *windows_.latest(), *windows_.best(),
                                     options_.delta);
      if (evaluated) {
        const WindowMean& latest = *pair.validation.latest();
        const WindowMean& best = *pair.validation.best();
        finding.figures.push_back({"validation_mean", latest.mean, name_});
        finding.figures.push_back({"best_validation_mean", best.mean, name_});
        finding.message +=
            "; " + not_improved("validation", "validation", latest, best, options_.delta);
      }
      finding.figures.push_back(
          {"patience_train", static_cast<double>(options_.patience_train), std::nullopt});
      finding.figures.push_back(
          {"patience_validation", static_cast<double>(options_.patience_validation), std::nullopt});
      finding.figures.push_back({"delta", options_.delta, std::nullopt});
      return true;
    }

   private:
    std::string name_;
    std::shared_ptr<Pair> pair_;
    OvertrainingRule::Options options_;
    WindowedOptimum windows_;
  };

  OvertrainingRule::Options options_;
  mutable std::mutex mutex_;  // guards pairs_ (jobs start their series on different threads)
  mutable std::map<std::string, std::shared_ptr<Pair>> pairs_;
};

}  // namespace

OvertrainingRule::OvertrainingRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)), options_(options) {}

RuleSpec overtraining_spec() {
  using Options = OvertrainingRule::Options;
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
    const Options options = read_overtraining_options(reader);
    reader.finish();
    return std::unique_ptr<Rule>(new OvertrainingRule(context.base_trial, options));
  };
  spec.create_series = [](const RuleParameters& parameters) -> std::shared_ptr<SeriesRule> {
    ParameterReader reader("Overtraining", parameters);
    const Options options = read_overtraining_options(reader);
    reader.finish();
    return std::make_shared<OvertrainingSeries>(options);
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
  const WindowMean& training = *progress.training.latest();
  const WindowMean& best_training = *progress.training.best();
  finding.tensors.push_back(tensor);
  finding.figures.push_back({"training_mean", training.mean, tensor});
  finding.figures.push_back({"best_training_mean", best_training.mean, tensor});
  std::string message = tensor + ": training goes on while the model stopped improving: " +
                        not_improved("training", "TRAIN", training, best_training, options_.delta);
  if (progress.evaluated) {
    const WindowMean& validation = *progress.validation.latest();
    const WindowMean& best_validation = *progress.validation.best();
    finding.figures.push_back({"validation_mean", validation.mean, tensor});
    finding.figures.push_back({"best_validation_mean", best_validation.mean, tensor});
    message +=
        "; " + not_improved("validation", "EVAL", validation, best_validation, options_.delta);
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
