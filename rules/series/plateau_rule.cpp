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
//   at exactly 0 is converged, not stuck.
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

class LossUnchanged final : public SeriesState {
 public:
  LossUnchanged(std::string name, const PlateauRule::Options& options)
      : name_(std::move(name)), options_(options) {}

  bool add(std::int64_t step, double value, Finding& finding) override {
    if (!std::isfinite(value)) return false;
    const std::optional<double> before = last_;
    const std::int64_t before_step = last_step_;
    last_ = value;
    last_step_ = step;
    if (!before) return false;
    const double scale = std::max(std::abs(*before), std::abs(value));
    const bool unchanged = scale == 0.0 || std::abs(value - *before) <= options_.tolerance * scale;
    if (!unchanged) {
      moved_ = true;
      unchanged_ = 0;
      if (fired_) mark_cleared();
      fired_ = false;
      return false;
    }
    if (!moved_ || value == 0.0) return false;
    if (unchanged_++ == 0) since_ = before_step;
    if (fired_ || unchanged_ < options_.patience_unchanged) return false;
    fired_ = true;
    finding.tensors = {name_};
    finding.figures = {{"value", value, name_},
                       {"values_unchanged", static_cast<double>(unchanged_ + 1), name_}};
    finding.message = "plateau: " + name_ + " has stayed at " + format_rounded(value) + " for " +
                      std::to_string(unchanged_ + 1) + " values (step " + std::to_string(since_) +
                      " to " + std::to_string(step) +
                      "): the parameters are not moving; check the learning rate, frozen "
                      "layers and the optimizer";
    return true;
  }

 private:
  std::string name_;
  PlateauRule::Options options_;
  std::optional<double> last_;
  std::int64_t last_step_ = 0;
  bool moved_ = false;
  std::int64_t unchanged_ = 0;  // values equal to the one before, in a row
  std::int64_t since_ = 0;
  bool fired_ = false;
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
  return std::make_unique<LossUnchanged>(series.display_name(), options_);
}

RuleSpec plateau_spec() {
  using Options = PlateauRule::Options;
  const Options defaults;
  RuleSpec spec;
  spec.name = "Plateau";
  spec.aliases = {"plateau"};
  spec.description =
      "training that stopped moving: a learning rate held at 0, or a loss that repeats itself "
      "exactly (parameters that no longer change)";
  spec.parameters = {{"patience", "int", std::to_string(defaults.patience),
                      "learning-rate values in a row at 0 (after it was above 0)"},
                     {"patience_unchanged", "int", std::to_string(defaults.patience_unchanged),
                      "loss values in a row equal to the one before"},
                     {"tolerance", "float", format_figure(defaults.tolerance),
                      "a relative change at most this large counts as none"}};
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
    reader.finish();
    return std::make_shared<PlateauRule>(options);
  };
  spec.create = series_rule_on_trial(spec.create_series);
  return spec;
}

}  // namespace rulestream
