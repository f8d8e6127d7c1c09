// OverfittingTrend: a validation loss rising from its best while the training loss keeps
// falling, judged as a trend rather than as a fixed gap (a validation loss that sits 10-20%
// above training, as they do, is no overfitting). On each value of a validation loss series
// (paired with the training loss of its job as Overfit pairs them: SeriesInfo::group, where
// Lightning's _step and _epoch suffixes do not split a pair):
//
// - the best is the lowest validation value so far; a new best ends any incident;
// - it fires when `patience` validation values have come since the best without a new one, the
//   latest at least `min_rise_percent` above the best (or more, when the series is noisy:
//   exp(noise_deviations x the median absolute log change between its consecutive values,
//   over its last 64 changes) - 1), and the
//   training loss's level now (its mean over the values since the previous validation value,
//   or its last value before when there are none) is below its level at the best's validation
//   value: still learning the training set;
// - once per incident: it fires again only after a new best.
//
// When a job writes a training loss per step and one per epoch (Lightning's train_loss_step
// and train_loss_epoch), the epoch-level one is compared.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/builtin_rules.hpp"
#include "rules/rule_registry.hpp"
#include "rules/series_rule.hpp"
#include "rules/series_rule_on_trial.hpp"
#include "rules/support/recent_values.hpp"
#include "rules/support/rule_text.hpp"

namespace rulestream {

class OverfittingTrendRule final : public SeriesRule {
 public:
  struct Options {
    std::int64_t patience = 3;
    double min_rise_percent = 3.0;
    double noise_deviations = 3.0;
    std::int64_t start_step = 0;
  };

  OverfittingTrendRule(std::vector<NameRegex> regexes, Options options);

  std::string_view name() const override { return "OverfittingTrend"; }
  bool watches(const SeriesInfo& series) const override;
  std::unique_ptr<SeriesState> start(const SeriesInfo& series) const override;
  bool clears_itself() const override { return true; }
  std::size_t memory_points() const override { return 0; }
  std::string looks_for() const override {
    return "pairs of training and validation loss series (docs/tensorboard.md: which tags)";
  }
  std::vector<std::string> tag_regexes() const override;
  const Options& options() const { return options_; }

  // What the training and validation series of one group share; defined in the .cpp.
  struct Pair;

 private:
  std::vector<NameRegex> regexes_;
  Options options_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::shared_ptr<Pair>> pairs_;
};

namespace {

// The training values a pair keeps per series, newest by step.
constexpr std::size_t kTrainingMemory = 4096;
// The validation series' changes its noise is measured over, newest.
constexpr std::size_t kChangesKept = 64;

bool names_epoch(const std::string& tag) {
  std::string lower;
  for (const char c : tag)
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return lower.find("epoch") != std::string::npos;
}

}  // namespace

struct OverfittingTrendRule::Pair {
  struct Training {
    std::string name;
    bool epoch_level = false;
    std::map<std::int64_t, double> values;  // the last kTrainingMemory, by step
  };
  std::vector<Training> training;

  // The training series a validation value is compared with: an epoch-level one when there is
  // one, else the first that arrived; nullptr when none has.
  const Training* compared() const {
    const Training* chosen = nullptr;
    for (const Training& each : training) {
      if (each.values.empty()) continue;
      if (chosen == nullptr || (each.epoch_level && !chosen->epoch_level)) chosen = &each;
    }
    return chosen;
  }

  // The mean of `series`' finite values in (after, up_to]; when it has none there, its last
  // finite value at or before up_to (Lightning writes an epoch's val_loss before its
  // train_loss_epoch, at the same step: the epoch before stands in); nullopt when none.
  static std::optional<double> level(const Training& series, std::optional<std::int64_t> after,
                                     std::int64_t up_to) {
    const auto from = after ? series.values.upper_bound(*after) : series.values.begin();
    const auto to = series.values.upper_bound(up_to);
    double sum = 0.0;
    std::int64_t count = 0;
    for (auto at = from; at != to; ++at) {
      if (!std::isfinite(at->second)) continue;
      sum += at->second;
      ++count;
    }
    if (count > 0) return sum / static_cast<double>(count);
    for (auto at = std::make_reverse_iterator(from); at != series.values.rend(); ++at) {
      if (std::isfinite(at->second)) return at->second;
    }
    return std::nullopt;
  }
};

namespace {

class TrainingState final : public SeriesState {
 public:
  TrainingState(std::shared_ptr<OverfittingTrendRule::Pair> pair, std::size_t index)
      : pair_(std::move(pair)), index_(index) {}

  bool add(std::int64_t step, double value, Finding&) override {
    auto& values = pair_->training[index_].values;
    values.erase(values.lower_bound(step), values.end());  // written again: a restart
    values.emplace(step, value);
    if (values.size() > kTrainingMemory) values.erase(values.begin());
    return false;
  }

 private:
  std::shared_ptr<OverfittingTrendRule::Pair> pair_;
  std::size_t index_;
};

class ValidationState final : public SeriesState {
 public:
  ValidationState(std::string name, std::shared_ptr<OverfittingTrendRule::Pair> pair,
                  const OverfittingTrendRule::Options& options)
      : name_(std::move(name)), pair_(std::move(pair)), options_(options) {}

  bool add(std::int64_t step, double value, Finding& finding) override {
    if (step < options_.start_step) return false;
    if (previous_step_ && step <= *previous_step_) reset();  // a restart
    const auto* training = pair_->compared();
    const std::optional<double> training_level =
        training ? OverfittingTrendRule::Pair::level(*training, previous_step_, step)
                 : std::nullopt;
    previous_step_ = step;
    if (!std::isfinite(value)) return false;
    if (last_ && *last_ > 0.0 && value > 0.0) {
      changes_.add(std::abs(std::log(value / *last_)));
    }
    last_ = value;
    if (!best_ || value < *best_) {
      best_ = value;
      best_step_ = step;
      training_at_best_ = training_level;
      values_since_best_ = 0;
      if (fired_) mark_cleared();  // a new best: the overfitting is over
      fired_ = false;
      return false;
    }
    if (fired_ || ++values_since_best_ < options_.patience) return false;
    // The series' noise: its typical change from one evaluation to the next, over its history
    // (a validation loss that swung by 50% while it fell needs more than a creep of 12%).
    const double noise = changes_.median();
    const double needed = std::max(options_.min_rise_percent / 100.0,
                                   std::exp(options_.noise_deviations * noise) - 1.0);
    const double rise = (value - *best_) / std::abs(*best_);
    if (!(*best_ > 0.0) || rise < needed) return false;
    if (!training_level || !training_at_best_ || !(*training_level < *training_at_best_)) {
      return false;
    }
    fired_ = true;
    const double fall = (*training_at_best_ - *training_level) / std::abs(*training_at_best_);
    finding.tensors = {name_, training->name};
    finding.figures = {{"validation_loss", value, name_},
                       {"best_validation_loss", *best_, name_},
                       {"rise_percent", rise * 100.0, name_},
                       {"training_loss", *training_level, training->name},
                       {"training_fall_percent", fall * 100.0, training->name}};
    finding.message = "overfitting since step " + std::to_string(best_step_) + ": " + name_ +
                      " up " + format_rounded(rise * 100.0) + "% from its best " +
                      format_rounded(*best_) + " while " + training->name + " fell " +
                      format_rounded(fall * 100.0) +
                      "%; stop at the best checkpoint, or add regularisation or data";
    return true;
  }

 private:
  void reset() {
    best_.reset();
    training_at_best_.reset();
    changes_.clear();
    values_since_best_ = 0;
    last_.reset();
    fired_ = false;
  }

  std::string name_;
  std::shared_ptr<OverfittingTrendRule::Pair> pair_;
  OverfittingTrendRule::Options options_;
  std::optional<std::int64_t> previous_step_;
  std::optional<double> best_;
  std::int64_t best_step_ = 0;
  std::optional<double> training_at_best_;
  RecentValues changes_{kChangesKept};  // |log change| between consecutive validation values
  std::int64_t values_since_best_ = 0;
  std::optional<double> last_;
  bool fired_ = false;
};

}  // namespace

OverfittingTrendRule::OverfittingTrendRule(std::vector<NameRegex> regexes, Options options)
    : regexes_(std::move(regexes)), options_(options) {}

bool OverfittingTrendRule::watches(const SeriesInfo& series) const {
  if (!series.figure.empty() || series.group.empty()) return false;
  if (series.mode != Mode::Train && series.mode != Mode::Eval) return false;
  return regexes_.empty() ? series.role == SeriesRole::Loss : any_found_in(regexes_, series.tag);
}

std::vector<std::string> OverfittingTrendRule::tag_regexes() const {
  std::vector<std::string> patterns;
  for (const NameRegex& regex : regexes_) patterns.push_back(regex.pattern());
  return patterns;
}

std::unique_ptr<SeriesState> OverfittingTrendRule::start(const SeriesInfo& series) const {
  std::shared_ptr<Pair> pair;
  {
    const std::lock_guard lock(mutex_);
    auto& slot = pairs_[series.group];
    if (!slot) slot = std::make_shared<Pair>();
    pair = slot;
  }
  if (series.mode == Mode::Eval) {
    return std::make_unique<ValidationState>(series.display_name(), std::move(pair), options_);
  }
  // A job's series are fed by one thread at a time: the pair needs no lock of its own.
  pair->training.push_back({series.display_name(), names_epoch(series.tag), {}});
  const std::size_t index = pair->training.size() - 1;
  return std::make_unique<TrainingState>(std::move(pair), index);
}

RuleSpec overfitting_trend_spec() {
  using Options = OverfittingTrendRule::Options;
  const Options defaults;
  RuleSpec spec;
  spec.name = "OverfittingTrend";
  spec.aliases = {"overfitting_trend"};
  spec.description =
      "a validation loss rising from its best for several evaluations while the training loss "
      "keeps falling";
  spec.parameters = {
      {"tag_regex", "regex list", "",
       "the loss series to pair (default: every loss series with a training and a validation "
       "side)"},
      {"patience", "int", std::to_string(defaults.patience),
       "validation values since the best before the rise counts"},
      {"min_rise_percent", "float", format_figure(defaults.min_rise_percent),
       "how far above its best, at least, the validation loss must be"},
      {"noise_deviations", "float", format_figure(defaults.noise_deviations),
       "for a noisy validation loss: how many of its typical changes the rise must span"},
      {"start_step", "int", std::to_string(defaults.start_step),
       "validation values before this step are not judged"}};
  spec.create_series = [](const RuleParameters& parameters) -> std::shared_ptr<SeriesRule> {
    ParameterReader reader("OverfittingTrend", parameters);
    const auto patterns = reader.regex_list("tag_regex", {});
    const Options preset;
    Options options;
    options.patience = reader.integer("patience", preset.patience);
    if (options.patience < 1) throw reader.invalid("patience", "must be at least 1");
    options.min_rise_percent = reader.number("min_rise_percent", preset.min_rise_percent);
    if (!(options.min_rise_percent >= 0.0)) {
      throw reader.invalid("min_rise_percent", "must not be negative");
    }
    options.noise_deviations = reader.number("noise_deviations", preset.noise_deviations);
    if (!(options.noise_deviations >= 0.0)) {
      throw reader.invalid("noise_deviations", "must not be negative");
    }
    options.start_step = reader.integer("start_step", preset.start_step);
    reader.finish();
    return std::make_shared<OverfittingTrendRule>(compile_name_regexes(patterns), options);
  };
  spec.create = series_rule_on_trial(spec.create_series);
  return spec;
}

}  // namespace rulestream
