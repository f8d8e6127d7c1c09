#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/model/mode.hpp"
#include "rules/builtin_rules.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/series_rule.hpp"
#include "rules/support/loss_series.hpp"
#include "rules/support/rule_text.hpp"
#include "rules/support/tensor_selection.hpp"

namespace rulestream {

// SageMaker's Overfit (seed 002): compares each loss tensor's validation (EVAL) and training
// (TRAIN) values. Training alternates TRAIN steps and evaluation passes of EVAL steps; the mean
// training loss is taken over the TRAIN steps since the previous evaluation pass, the mean
// validation loss over the current pass so far. At every EVAL step that saved the loss:
//   ratio = (mean validation - mean training) / |mean training|
// and the rule fires once the ratio has exceeded ratio_threshold at `patience` consecutive
// EVAL steps (and at each following one while it stays above). Steps before start_step (a
// global step) are ignored; a pass with no training window before it, or a mean training loss
// of 0, is not judged. Loss tensors: tensor_regex when given, else the `losses` collection.
class OverfitRule final : public Rule {
 public:
  struct Options {
    std::vector<std::string> tensor_regex;
    std::int64_t start_step = 0;
    std::int64_t patience = 1;
    double ratio_threshold = 0.1;
  };

  OverfitRule(Trial base_trial, Options options);

  std::string_view name() const override { return "Overfit"; }
  bool invoke_at_step(std::int64_t step) override;
  RequiredTensors required_tensors() const override { return selection_.required(); }

  const Options& options() const { return options_; }

 private:
  // A loss tensor's running figures.
  struct Series {
    std::optional<Mode> last_mode;  // mode of the last step that saved it
    double train_sum = 0.0;         // the TRAIN steps since the last evaluation pass
    std::int64_t train_count = 0;
    std::optional<double> train_mean;  // the window before the current evaluation pass
    std::int64_t train_window = 0;     // its number of steps
    double eval_sum = 0.0;             // the current evaluation pass
    std::int64_t eval_count = 0;
    std::int64_t exceeded = 0;  // consecutive EVAL steps above ratio_threshold
  };

  Options options_;
  TensorSelection selection_;
  std::map<std::string, Series> series_;
};

namespace {

// On a TensorBoard logdir: a loss's training and validation series of one job, paired by their
// group (SeriesInfo::group), compared as the rule compares TRAIN and EVAL steps. A validation
// value at step s opens an evaluation pass when training values arrived since the last one:
// those at steps up to s are the pass's training window, and their mean its training loss;
// validation values with no training value between them are one pass, whose mean so far is
// compared: (mean validation - mean training) / |mean training| above ratio_threshold at
// `patience` consecutive validation values fires (and each one after while it stays above).
// Steps before start_step are left out. A job's series are fed by one thread at a time (the
// pipeline reads a job's runs together, its training runs first). A step written again (a
// restart) replaces what the pair kept from that step on.
class OverfitSeries final : public SeriesRule {
 public:
  explicit OverfitSeries(OverfitRule::Options options)
      : options_(std::move(options)), regexes_(compile_name_regexes(options_.tensor_regex)) {}

  std::string_view name() const override { return "Overfit"; }
  bool watches(const SeriesInfo& series) const override {
    if (!series.figure.empty() || series.group.empty()) return false;
    if (series.mode != Mode::Train && series.mode != Mode::Eval) return false;
    return regexes_.empty() ? series.role == SeriesRole::Loss : any_found_in(regexes_, series.tag);
  }
  std::size_t memory_points() const override { return 0; }
  std::string looks_for() const override {
    return "pairs of training and validation loss series (docs/tensorboard.md: which tags)";
  }
  std::vector<std::string> tag_regexes() const override { return options_.tensor_regex; }

  std::unique_ptr<SeriesState> start(const SeriesInfo& series) const override {
    std::shared_ptr<Pair> pair;
    {
      const std::lock_guard lock(mutex_);
      auto& slot = pairs_[series.group];
      if (!slot) slot = std::make_shared<Pair>();
      pair = slot;
    }
    return std::make_unique<State>(series.display_name(), series.mode == Mode::Eval,
                                   std::move(pair), options_);
  }

 private:
  // What the two series of a pair share. The last kMemory values of each are kept by step, so
  // that a run restarted from a checkpoint (a step written again: TensorBoard keeps the new
  // values from that step on) is judged with the training windows its steps had.
  static constexpr std::size_t kMemory = 1024;
  struct Pair {
    std::map<std::int64_t, double> train;  // the last training values, by step
    std::set<std::int64_t> evals;          // the last validation steps
    std::optional<double> train_mean;      // the current pass's training window
    std::int64_t window = 0;
    double eval_sum = 0.0;  // the current pass
    std::int64_t eval_count = 0;
    std::int64_t exceeded = 0;  // consecutive validation values above ratio_threshold
  };

  class State final : public SeriesState {
   public:
    State(std::string name, bool validation, std::shared_ptr<Pair> pair,
          const OverfitRule::Options& options)
        : name_(std::move(name)),
          validation_(validation),
          pair_(std::move(pair)),
          options_(options) {}

    bool add(std::int64_t step, double loss, Finding& finding) override {
      if (step < options_.start_step) return false;
      Pair& pair = *pair_;
      if (!validation_) {
        pair.train.erase(pair.train.lower_bound(step), pair.train.end());  // a restart's
        pair.train[step] = loss;
        if (pair.train.size() > kMemory) pair.train.erase(pair.train.begin());
        return false;
      }
      if (pair.evals.lower_bound(step) != pair.evals.end()) {  // written again: a restart
        pair.evals.erase(pair.evals.lower_bound(step), pair.evals.end());
        pair.train_mean.reset();
        pair.exceeded = 0;
      }
      // The training window: values after the previous validation step, up to this one.
      const auto previous = pair.evals.empty() ? std::nullopt : std::optional(*pair.evals.rbegin());
      pair.evals.insert(step);
      if (pair.evals.size() > kMemory) pair.evals.erase(pair.evals.begin());
      const auto from = previous ? pair.train.upper_bound(*previous) : pair.train.begin();
      const auto to = pair.train.upper_bound(step);
      if (from != to) {  // training values since the last validation value: a new pass
        double sum = 0.0;
        std::int64_t count = 0;
        for (auto at = from; at != to; ++at, ++count) sum += at->second;
        pair.train_mean = sum / static_cast<double>(count);
        pair.window = count;
        pair.eval_sum = 0.0;
        pair.eval_count = 0;
      }
      if (!pair.train_mean || *pair.train_mean == 0.0) return false;  // not judged
      pair.eval_sum += loss;
      ++pair.eval_count;
      const double validation = pair.eval_sum / static_cast<double>(pair.eval_count);
      const double ratio = (validation - *pair.train_mean) / std::abs(*pair.train_mean);
      pair.exceeded = ratio > options_.ratio_threshold ? pair.exceeded + 1 : 0;
      if (pair.exceeded < options_.patience) return false;
      finding.tensors = {name_};
      finding.figures = {{"ratio", ratio, name_},
                         {"mean_validation_loss", validation, name_},
                         {"mean_training_loss", *pair.train_mean, name_},
                         {"ratio_threshold", options_.ratio_threshold, std::nullopt}};
      finding.message = name_ + ": mean validation loss " + format_figure(validation) + " is " +
                        format_figure(ratio * 100.0) + "% above the mean training loss " +
                        format_figure(*pair.train_mean) + " of the " + std::to_string(pair.window) +
                        " training values before it (ratio_threshold " +
                        format_figure(options_.ratio_threshold) + ")";
      return true;
    }

   private:
    std::string name_;
    bool validation_;
    std::shared_ptr<Pair> pair_;
    OverfitRule::Options options_;
  };

  OverfitRule::Options options_;
  std::vector<NameRegex> regexes_;
  mutable std::mutex mutex_;  // guards pairs_ (jobs start their series on different threads)
  mutable std::map<std::string, std::shared_ptr<Pair>> pairs_;
};

OverfitRule::Options read_overfit_options(ParameterReader& reader) {
  OverfitRule::Options options;
  options.tensor_regex = reader.regex_list("tensor_regex", options.tensor_regex);
  options.start_step = reader.integer("start_step", options.start_step);
  if (options.start_step < 0) throw reader.invalid("start_step", "must not be negative");
  options.patience = reader.integer("patience", options.patience);
  if (options.patience < 1) throw reader.invalid("patience", "must be at least 1");
  options.ratio_threshold = reader.number("ratio_threshold", options.ratio_threshold);
  if (options.ratio_threshold < 0.0) {
    throw reader.invalid("ratio_threshold", "must not be negative");
  }
  return options;
}

TensorSelection overfit_selection(const OverfitRule::Options& options) {
  if (!options.tensor_regex.empty()) return {.regexes = options.tensor_regex};
  return {.collections = {"losses"}};
}

}  // namespace

OverfitRule::OverfitRule(Trial base_trial, Options options)
    : Rule(std::move(base_trial)),
      options_(std::move(options)),
      selection_(overfit_selection(options_)) {}

RuleSpec overfit_spec() {
  using Options = OverfitRule::Options;
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
    Options options = read_overfit_options(reader);
    reader.finish();
    return std::unique_ptr<Rule>(new OverfitRule(context.base_trial, std::move(options)));
  };
  spec.create_series = [](const RuleParameters& parameters) -> std::shared_ptr<SeriesRule> {
    ParameterReader reader("Overfit", parameters);
    Options options = read_overfit_options(reader);
    reader.finish();
    return std::make_shared<OverfitSeries>(std::move(options));
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
