// Plateau: training that has stopped moving because the model is no longer being updated, told
// by what such a run writes (docs/rules.md gives the reasoning and what it does not catch):
//
// - a learning-rate series at exactly 0 for `patience` values in a row after it was above 0
//   (a schedule or an optimizer set to 0; the last value of a schedule that ends at 0 is one
//   value, not `patience`);
// - a loss series whose value does not change, relatively by more than `tolerance`, for
//   `patience_unchanged` values in a row after it had been changing: an epoch or evaluation
//   loss over the same data with parameters that do not move (frozen, or a learning rate of 0)
//   repeats itself exactly, where a model that still learns, however slowly, does not. A loss
//   at exactly 0 is converged, not stuck;
// - a loss whose improvement collapses at once: a fall of `fast_improvement` (5%) or more from
//   one value to the next, then `patience_unchanged` changes in a row each at most
//   `stalled_improvement` (1%) and `collapse` (20) times smaller than that fall. Training that
//   slows down does so gradually (a schedule, a model nearing what the data allows); one whose
//   parameters almost all stopped moving (every layer frozen but a bias, as a fine-tuning switch
//   flipped by mistake does) goes from learning fast to barely moving in one value. Per-batch
//   noise of 1% or more never looks like that, so noisy series are left alone.
//
// A plateau hidden in per-batch noise with no learning rate logged and no epoch or evaluation
// loss is not judged: telling it from a converged run needs more than one noisy series.
// Fires once per incident; ready again once the series moves.

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/builtin_rules.hpp"
#include "rules/rule_registry.hpp"
#include "rules/series_rule.hpp"
#include "rules/series_rule_on_trial.hpp"
#include "rules/support/rule_text.hpp"

namespace rulestream {

class PlateauRule final : public SeriesRule {
 public:
  struct Options {
    std::int64_t patience = 10;           // learning-rate values at 0
    std::int64_t patience_unchanged = 3;  // loss values equal to the one before
    double tolerance = 1e-5;              // relative change that counts as none
    double fast_improvement = 0.05;       // a relative fall this large is learning fast
    double stalled_improvement = 0.01;    // relative changes at most this large after it...
    double collapse = 20.0;               // ...and this many times smaller: a stall
  };

  explicit PlateauRule(Options options) : options_(options) {}

  std::string_view name() const override { return "Plateau"; }
  bool watches(const SeriesInfo& series) const override;
  std::unique_ptr<SeriesState> start(const SeriesInfo& series) const override;
  bool clears_itself() const override { return true; }
  std::size_t memory_points() const override {
    return static_cast<std::size_t>(std::max(options_.patience, options_.patience_unchanged) + 2);
  }
  std::string looks_for() const override { return "loss or learning-rate series"; }
  std::vector<std::string> tag_regexes() const override { return {}; }
  const Options& options() const { return options_; }

 private:
  Options options_;
};

namespace {

class LearningRateAtZero final : public SeriesState {
 public:
  LearningRateAtZero(std::string name, std::int64_t patience)
      : name_(std::move(name)), patience_(patience) {}

  bool add(std::int64_t step, double value, Finding& finding) override {
    if (!std::isfinite(value)) return false;
    if (value != 0.0) {
      if (value > 0.0) was_positive_ = true;
      zeros_ = 0;
      if (fired_) mark_cleared();
      fired_ = false;
      return false;
    }
    if (!was_positive_) return false;
    if (zeros_++ == 0) first_zero_ = step;
    if (fired_ || zeros_ < patience_) return false;
    fired_ = true;
    finding.tensors = {name_};
    finding.figures = {{"learning_rate", value, name_},
                       {"values_at_zero", static_cast<double>(zeros_), name_}};
    finding.message = "plateau: " + name_ + " is 0 since step " + std::to_string(first_zero_) +
                      " (" + std::to_string(zeros_) +
                      " values): the model is not being updated; check the schedule and the "
                      "optimizer's learning rate";
    return true;
  }

 private:
  std::string name_;
  std::int64_t patience_;
  bool was_positive_ = false;
  std::int64_t zeros_ = 0;
  std::int64_t first_zero_ = 0;
  bool fired_ = false;
};

// Both of a loss's plateaus: a value repeated exactly, and an improvement that collapsed at once.
// One incident: it opens at whichever is seen first and clears when the loss moves again as
// that one defines moving.
class LossStalled final : public SeriesState {
 public:
  LossStalled(std::string name, const PlateauRule::Options& options)
      : name_(std::move(name)), options_(options) {}

  bool add(std::int64_t step, double value, Finding& finding) override {
    if (!std::isfinite(value)) return false;
    const std::optional<double> before = last_;
    const std::int64_t before_step = last_step_;
    last_ = value;
    last_step_ = step;
    if (!before) return false;
    const bool repeated = judge_repeat(*before, before_step, value);
    const bool stalled = judge_improvement(*before, before_step, value);
    if (fired_ != Fired::None) {
      // Moving again: a change that is no repeat, or (for a collapse) no small one.
      const bool moving = fired_ == Fired::Repeat ? repeats_ == 0 : stalls_ == 0;
      if (moving) {
        fired_ = Fired::None;
        mark_cleared();
      }
      return false;
    }
    if (repeated) {
      fired_ = Fired::Repeat;
      finding.tensors = {name_};
      finding.figures = {{"value", value, name_},
                         {"values_unchanged", static_cast<double>(repeats_ + 1), name_}};
      finding.message = "plateau: " + name_ + " has stayed at " + format_rounded(value) + " for " +
                        std::to_string(repeats_ + 1) + " values (step " +
                        std::to_string(repeat_since_) + " to " + std::to_string(step) +
                        "): the parameters are not moving; check the learning rate, frozen "
                        "layers and the optimizer";
      return true;
    }
    if (stalled) {
      fired_ = Fired::Improvement;
      finding.tensors = {name_};
      finding.figures = {{"value", value, name_},
                         {"fall_before", *fast_fall_, name_},
                         {"largest_change_since", largest_since_, name_}};
      finding.message =
          "plateau: " + name_ + " stopped improving at step " + std::to_string(stall_since_) +
          ": it fell " + format_rounded(100.0 * *fast_fall_) + "% in the value before, and has " +
          "moved at most " + format_rounded(100.0 * largest_since_) + "% a value since, for " +
          std::to_string(stalls_) + " values (to step " + std::to_string(step) + ", at " +
          format_rounded(value) +
          "): most parameters seem to have stopped changing; check frozen layers, the "
          "learning rate and the optimizer";
      return true;
    }
    return false;
  }

 private:
  enum class Fired { None, Repeat, Improvement };

  // The exact repeat: true once the loss has repeated itself patience_unchanged times in a row
  // after it had moved.
  bool judge_repeat(double before, std::int64_t before_step, double value) {
    const double scale = std::max(std::abs(before), std::abs(value));
    const bool unchanged = scale == 0.0 || std::abs(value - before) <= options_.tolerance * scale;
    if (!unchanged) {
      moved_ = true;
      repeats_ = 0;
      return false;
    }
    if (!moved_ || value == 0.0) return false;
    if (repeats_++ == 0) repeat_since_ = before_step;
    return repeats_ >= options_.patience_unchanged;
  }

  // The collapse: true once patience_unchanged small changes follow a fast fall. Losses at or
  // below 0 are not judged by ratios.
  bool judge_improvement(double before, std::int64_t before_step, double value) {
    if (before <= 0.0 || value <= 0.0) {
      fast_fall_.reset();
      stalls_ = 0;
      return false;
    }
    const double change = (value - before) / before;
    if (-change >= options_.fast_improvement) {  // learning fast: a stall may follow
      fast_fall_ = -change;
      stalls_ = 0;
      largest_since_ = 0.0;
      return false;
    }
    const bool small = fast_fall_ && std::abs(change) <= options_.stalled_improvement &&
                       std::abs(change) * options_.collapse <= *fast_fall_;
    if (!small) {
      fast_fall_.reset();
      stalls_ = 0;
      return false;
    }
    if (stalls_++ == 0) stall_since_ = before_step;
    largest_since_ = std::max(largest_since_, std::abs(change));
    return stalls_ >= options_.patience_unchanged;
  }

  std::string name_;
  PlateauRule::Options options_;
  std::optional<double> last_;
  std::int64_t last_step_ = 0;
  Fired fired_ = Fired::None;
  // The exact repeat.
  bool moved_ = false;
  std::int64_t repeats_ = 0;  // values equal to the one before, in a row
  std::int64_t repeat_since_ = 0;
  // The collapse.
  std::optional<double> fast_fall_;  // the last fast fall, while only small changes followed
  std::int64_t stalls_ = 0;          // small changes since it
  std::int64_t stall_since_ = 0;
  double largest_since_ = 0.0;
};

}  // namespace

bool PlateauRule::watches(const SeriesInfo& series) const {
  return series.figure.empty() &&
         (series.role == SeriesRole::Loss || series.role == SeriesRole::LearningRate);
}

std::unique_ptr<SeriesState> PlateauRule::start(const SeriesInfo& series) const {
  if (series.role == SeriesRole::LearningRate) {
    return std::make_unique<LearningRateAtZero>(series.display_name(), options_.patience);
  }
  return std::make_unique<LossStalled>(series.display_name(), options_);
}

RuleSpec plateau_spec() {
  using Options = PlateauRule::Options;
  const Options defaults;
  RuleSpec spec;
  spec.name = "Plateau";
  spec.aliases = {"plateau"};
  spec.description =
      "training that stopped moving: a learning rate held at 0, a loss that repeats itself "
      "exactly (parameters that no longer change), or a loss that goes from learning fast to "
      "barely moving in one value";
  spec.parameters = {{"patience", "int", std::to_string(defaults.patience),
                      "learning-rate values in a row at 0 (after it was above 0)"},
                     {"patience_unchanged", "int", std::to_string(defaults.patience_unchanged),
                      "loss values in a row equal to the one before"},
                     {"tolerance", "float", format_figure(defaults.tolerance),
                      "a relative change at most this large counts as none"},
                     {"fast_improvement", "float", format_figure(defaults.fast_improvement),
                      "a relative fall at least this large from one loss value to the next is "
                      "learning fast"},
                     {"stalled_improvement", "float", format_figure(defaults.stalled_improvement),
                      "after a fast fall, patience_unchanged relative changes in a row at most "
                      "this large (and collapse times smaller) are a stall"},
                     {"collapse", "float", format_figure(defaults.collapse),
                      "how many times smaller than the fast fall each change after it is"}};
  spec.create_series = [](const RuleParameters& parameters) -> std::shared_ptr<SeriesRule> {
    ParameterReader reader("Plateau", parameters);
    const Options preset;
    Options options;
    options.patience = reader.integer("patience", preset.patience);
    if (options.patience < 1) throw reader.invalid("patience", "must be at least 1");
    options.patience_unchanged = reader.integer("patience_unchanged", preset.patience_unchanged);
    if (options.patience_unchanged < 1) {
      throw reader.invalid("patience_unchanged", "must be at least 1");
    }
    options.tolerance = reader.number("tolerance", preset.tolerance);
    if (!(options.tolerance >= 0.0 && options.tolerance < 1.0)) {
      throw reader.invalid("tolerance", "must be at least 0 and below 1");
    }
    options.fast_improvement = reader.number("fast_improvement", preset.fast_improvement);
    if (!(options.fast_improvement > 0.0 && options.fast_improvement < 1.0)) {
      throw reader.invalid("fast_improvement", "must be above 0 and below 1");
    }
    options.stalled_improvement = reader.number("stalled_improvement", preset.stalled_improvement);
    if (!(options.stalled_improvement >= 0.0 &&
          options.stalled_improvement < options.fast_improvement)) {
      throw reader.invalid("stalled_improvement", "must be at least 0 and below fast_improvement");
    }
    options.collapse = reader.number("collapse", preset.collapse);
    if (!(options.collapse >= 1.0)) throw reader.invalid("collapse", "must be at least 1");
    reader.finish();
    return std::make_shared<PlateauRule>(options);
  };
  spec.create = series_rule_on_trial(spec.create_series);
  return spec;
}

}  // namespace rulestream
