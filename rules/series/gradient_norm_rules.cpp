// Two rules on gradient-norm series (train/grad_norm, grad_2.0_norm_total, ...), each firing
// once per incident (docs/rules.md gives the derivations and how the defaults were measured):
//
// GradientExplosion: the norm's recent level (the median of its last `window` values) at least
// `factor` times its level before (the median of the `reference` values before those), or
// exp(noise_deviations x the reference's log spread) times when the norm is noisier than that.
// A norm that grows over a whole run (it often does, 3-4x) moves its reference with it; one
// that grows many times over within a window of values is exploding. Ready to fire again once
// the level has been under the threshold for `window` values.
//
// GradientVanishing: the norm's level (the median of its last `confirm` values) below `factor`
// times the highest level it has had (the median of `window` values): gradients that decay by
// orders of magnitude while the network has not learned (a deep sigmoid stack). Ready to fire
// again once the level is back above that line.
//
// Non-finite values are NonFinite's and are skipped; so are negative ones (no norm).

#include <cmath>
#include <cstdint>
#include <deque>
#include <memory>
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

struct GradientExplosionRuleOptions {
  std::int64_t window = 10;
  std::int64_t reference = 100;
  double factor = 5.0;
  double noise_deviations = 1.5;
};

class GradientExplosionRule final : public SelectedSeriesRule<GradientExplosionRuleOptions> {
 public:
  using Options = GradientExplosionRuleOptions;
  using SelectedSeriesRule::SelectedSeriesRule;

  std::string_view name() const override { return "GradientExplosion"; }
  std::unique_ptr<SeriesState> start(const SeriesInfo& series) const override;
  bool clears_itself() const override { return true; }
  std::size_t memory_points() const override {
    return static_cast<std::size_t>(options_.window + options_.reference);
  }
};

struct GradientVanishingRuleOptions {
  std::int64_t window = 20;
  double factor = 1e-3;
  std::int64_t confirm = 3;
};

class GradientVanishingRule final : public SelectedSeriesRule<GradientVanishingRuleOptions> {
 public:
  using Options = GradientVanishingRuleOptions;
  using SelectedSeriesRule::SelectedSeriesRule;

  std::string_view name() const override { return "GradientVanishing"; }
  std::unique_ptr<SeriesState> start(const SeriesInfo& series) const override;
  bool clears_itself() const override { return true; }
  // The peak is history: a restart rebuilds from 10 windows of values.
  std::size_t memory_points() const override {
    return static_cast<std::size_t>(10 * options_.window);
  }
};

namespace {

// A reference needs this many values before it is one.
constexpr std::int64_t kSmallestReference = 20;

class ExplosionState final : public SeriesState {
 public:
  ExplosionState(std::string name, const GradientExplosionRule::Options& options)
      : name_(std::move(name)), options_(options) {}

  bool add(std::int64_t step, double value, Finding& finding) override {
    if (!std::isfinite(value) || value < 0.0) return false;
    values_.push_back(value);
    const auto held = static_cast<std::size_t>(options_.window + options_.reference);
    if (values_.size() > held) values_.pop_front();
    const auto window = static_cast<std::size_t>(options_.window);
    if (values_.size() < window + static_cast<std::size_t>(kSmallestReference)) return false;

    scratch_.assign(values_.begin(), values_.end() - static_cast<std::ptrdiff_t>(window));
    const double reference = median_in_place(scratch_);
    if (!(reference > 0.0)) return false;
    for (double& each : scratch_) each = std::max(each, reference * 1e-12);  // no log of 0
    const double noise = log_spread_in_place(scratch_);
    const double threshold =
        reference * std::max(options_.factor, std::exp(options_.noise_deviations * noise));
    scratch_.assign(values_.end() - static_cast<std::ptrdiff_t>(window), values_.end());
    const double level = median_in_place(scratch_);

    if (level < threshold) {
      if (fired_ && ++calm_ >= options_.window) {
        fired_ = false;
        mark_cleared();
      }
      return false;
    }
    calm_ = 0;
    if (fired_) return false;
    fired_ = true;
    const double times = level / reference;
    finding.tensors = {name_};
    finding.figures = {{"level", level, name_},
                       {"reference_level", reference, name_},
                       {"times_reference", times, name_},
                       {"threshold", threshold, name_}};
    finding.message = name_ + " exploding: its median over the last " +
                      std::to_string(options_.window) + " values is " + format_rounded(level) +
                      " at step " + std::to_string(step) + ", " + format_rounded(times) +
                      "x its level before (" + format_rounded(reference) +
                      "); clip gradients or lower the learning rate";
    return true;
  }

 private:
  std::string name_;
  GradientExplosionRule::Options options_;
  std::deque<double> values_;  // the reference's values, then the window's
  std::vector<double> scratch_;
  bool fired_ = false;
  std::int64_t calm_ = 0;
};

class VanishingState final : public SeriesState {
 public:
  VanishingState(std::string name, const GradientVanishingRule::Options& options)
      : name_(std::move(name)),
        options_(options),
        level_values_(static_cast<std::size_t>(options.window)) {}

  bool add(std::int64_t step, double value, Finding& finding) override {
    if (!std::isfinite(value) || value < 0.0) return false;
    level_values_.add(value);
    const double level = level_values_.median();
    if (!peak_ || level > *peak_) {
      peak_ = level;
      peak_step_ = step;
    }
    const auto confirm = static_cast<std::size_t>(options_.confirm);
    if (level_values_.size() < confirm) return false;
    const double recent = level_values_.median_of_newest(confirm);
    const double line = options_.factor * *peak_;
    if (recent >= line) {
      if (fired_) mark_cleared();
      fired_ = false;
      return false;
    }
    if (fired_) return false;
    fired_ = true;
    finding.tensors = {name_};
    finding.figures = {{"level", recent, name_},
                       {"peak_level", *peak_, name_},
                       {"fraction_of_peak", recent / *peak_, name_}};
    finding.message = name_ + " vanishing: " + format_rounded(recent) + " at step " +
                      std::to_string(step) + ", " + format_rounded(recent / *peak_) +
                      " of its peak level " + format_rounded(*peak_) + " (step " +
                      std::to_string(peak_step_) +
                      "); the early layers barely learn: check activations (sigmoid, tanh), "
                      "initialisation and normalisation";
    return true;
  }

 private:
  std::string name_;
  GradientVanishingRule::Options options_;
  RecentValues level_values_;
  std::optional<double> peak_;
  std::int64_t peak_step_ = 0;
  bool fired_ = false;
};

}  // namespace

std::unique_ptr<SeriesState> GradientExplosionRule::start(const SeriesInfo& series) const {
  return std::make_unique<ExplosionState>(series.display_name(), options_);
}

RuleSpec gradient_explosion_spec() {
  using Options = GradientExplosionRule::Options;
  const Options defaults;
  RuleSpec spec;
  spec.name = "GradientExplosion";
  spec.aliases = {"gradient_explosion"};
  spec.description =
      "a gradient norm whose level grows many times over within a few values (beyond its own "
      "noise)";
  spec.parameters = {
      SeriesSelection::parameter(SeriesRole::GradientNorm),
      {"window", "int", std::to_string(defaults.window), "values whose median is the recent level"},
      {"reference", "int", std::to_string(defaults.reference),
       "values before those whose median is the level it is compared with"},
      {"factor", "float", format_figure(defaults.factor),
       "how many times the level before the recent level must be"},
      {"noise_deviations", "float", format_figure(defaults.noise_deviations),
       "for a noisy norm: how many standard deviations of its log values the growth must span"}};
  spec.create_series = [](const RuleParameters& parameters) -> std::shared_ptr<SeriesRule> {
    ParameterReader reader("GradientExplosion", parameters);
    auto selection = SeriesSelection::read(reader, SeriesRole::GradientNorm);
    const Options preset;
    Options options;
    options.window = reader.integer("window", preset.window);
    if (options.window < 1) throw reader.invalid("window", "must be at least 1");
    options.reference = reader.integer("reference", preset.reference);
    if (options.reference < kSmallestReference) {
      throw reader.invalid("reference", "must be at least " + std::to_string(kSmallestReference));
    }
    options.factor = reader.number("factor", preset.factor);
    if (!(options.factor > 1.0)) throw reader.invalid("factor", "must be above 1");
    options.noise_deviations = reader.number("noise_deviations", preset.noise_deviations);
    if (!(options.noise_deviations >= 0.0)) {
      throw reader.invalid("noise_deviations", "must not be negative");
    }
    reader.finish();
    return std::make_shared<GradientExplosionRule>(std::move(selection), options);
  };
  spec.create = series_rule_on_trial(spec.create_series);
  return spec;
}

std::unique_ptr<SeriesState> GradientVanishingRule::start(const SeriesInfo& series) const {
  return std::make_unique<VanishingState>(series.display_name(), options_);
}

RuleSpec gradient_vanishing_spec() {
  using Options = GradientVanishingRule::Options;
  const Options defaults;
  RuleSpec spec;
  spec.name = "GradientVanishing";
  spec.aliases = {"gradient_vanishing"};
  spec.description =
      "a gradient norm that decays by orders of magnitude below the highest level it had";
  spec.parameters = {SeriesSelection::parameter(SeriesRole::GradientNorm),
                     {"window", "int", std::to_string(defaults.window),
                      "values whose median is the level its peak is taken from"},
                     {"factor", "float", format_figure(defaults.factor),
                      "the fraction of its peak level below which the norm has vanished"},
                     {"confirm", "int", std::to_string(defaults.confirm),
                      "values whose median must be below that line"}};
  spec.create_series = [](const RuleParameters& parameters) -> std::shared_ptr<SeriesRule> {
    ParameterReader reader("GradientVanishing", parameters);
    auto selection = SeriesSelection::read(reader, SeriesRole::GradientNorm);
    const Options preset;
    Options options;
    options.window = reader.integer("window", preset.window);
    if (options.window < 1) throw reader.invalid("window", "must be at least 1");
    options.factor = reader.number("factor", preset.factor);
    if (!(options.factor > 0.0 && options.factor < 1.0)) {
      throw reader.invalid("factor", "must be between 0 and 1");
    }
    options.confirm = reader.integer("confirm", preset.confirm);
    if (options.confirm < 1 || options.confirm > options.window) {
      throw reader.invalid("confirm", "must be between 1 and window");
    }
    reader.finish();
    return std::make_shared<GradientVanishingRule>(std::move(selection), options);
  };
  spec.create = series_rule_on_trial(spec.create_series);
  return spec;
}

}  // namespace rulestream
