// Divergence: a loss that leaves its best level upwards, far and for real. Judged from the
// series' own history, with no warm-up, so a run that blows up in its first steps is caught
// there (docs/rules.md gives the derivation and how the defaults were measured):
//
// - The level is the median of the last `window` values that were not above the threshold;
//   the best level is the lowest it has been. The threshold is the best level times `factor`,
//   or times exp(noise_deviations x the series' noise) when the series is noisier than that
//   (the noise: RecentValues::log_step_noise of the level's values, free of their trend, the
//   largest seen; a loss whose batches scatter by 2x needs more than 2x to count). With fewer
//   than 5 values held there is no noise to measure yet, and the threshold is `early_factor`
//   times the best.
// - Once the loss has fallen by 20% or more from its start (the level of its first `window`
//   values), the threshold is also reached at `undo_fraction` of the way back from the best
//   level to the start, beyond the noise (a loss back at chance level has diverged at 2x).
// - It fires when the median of the last `confirm` values is above the threshold (a rise that
//   holds: the onset of a divergence, confirmed by `confirm` values), or at once on a single
//   value at least `jump_factor` times the best level (a jump by an order of magnitude needs
//   no confirmation) unless the series has a history of such excursions that came back (3 or
//   more values above 3x its level: an RL loss whose episodes differ).
// - Firing is by incident, not by value: once fired it fires again only when the loss reaches
//   10x the value it fired at (worse by another order of magnitude), and it is ready to fire
//   anew once the median of the last `confirm` values has been back under the threshold for
//   `window` values (a spike that recovered).
//
// Losses are positive: a series with a value at or below 0 (an RL policy loss, a log-likelihood)
// is not judged from that value on. Non-finite values are NonFinite's and are skipped.

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
#include "rules/support/recent_values.hpp"
#include "rules/support/rule_text.hpp"

namespace rulestream {

struct DivergenceRuleOptions {
  std::int64_t window = 20;
  double factor = 2.0;
  double noise_deviations = 3.0;
  std::int64_t confirm = 3;
  double jump_factor = 10.0;
  double early_factor = 4.0;
  double undo_fraction = 0.5;
};

class DivergenceRule final : public SelectedSeriesRule<DivergenceRuleOptions> {
 public:
  using Options = DivergenceRuleOptions;
  using SelectedSeriesRule::SelectedSeriesRule;

  std::string_view name() const override { return "Divergence"; }
  std::unique_ptr<SeriesState> start(const SeriesInfo& series) const override;
  bool clears_itself() const override { return true; }
  // The best level is history; a state rebuilt from 10 windows of values has seen it in all
  // but the slowest runs.
  std::size_t memory_points() const override {
    return static_cast<std::size_t>(10 * options_.window);
  }
};

namespace {

// Below this many level values the noise cannot be measured: the early factor applies.
constexpr std::size_t kValuesForNoise = 5;
// An excursion: a value above this multiple of the level (below the jump factor's reach).
constexpr double kExcursion = 3.0;
// This many excursions that came back make a series spiky: single jumps no longer fire.
constexpr int kSpikyAfter = 3;
// A firing is updated when the loss reaches this multiple of the value it fired at.
constexpr double kWorseBy = 10.0;
// The part of its start a loss must have shed before a climb back is judged against it.
constexpr double kProgress = 0.2;

class DivergenceState final : public SeriesState {
 public:
  DivergenceState(std::string name, const DivergenceRule::Options& options)
      : name_(std::move(name)),
        options_(options),
        level_values_(static_cast<std::size_t>(options.window)),
        newest_(static_cast<std::size_t>(options.confirm)) {}

  bool add(std::int64_t step, double value, Finding& finding) override {
    if (!std::isfinite(value) || !positive_) return false;
    if (value <= 0.0) {
      positive_ = false;  // not a loss measured by ratios
      return false;
    }
    newest_.add(value);
    bool above = false;
    bool fired = false;
    if (best_) {
      const double threshold = this->threshold();
      const double level = level_values_.median();
      above = value > threshold;
      if (value > kExcursion * level && value < options_.jump_factor * *best_) ++excursions_;
      const bool held = newest_.size() == newest_.capacity() && newest_.median() > threshold;
      const bool jumped =
          above && value >= options_.jump_factor * *best_ && excursions_ < kSpikyAfter;
      if (!fired_at_) {
        if (held || jumped) {
          fired_at_ = value;
          fired = true;
          describe(finding, step, value, threshold, jumped && !held ? "jumped" : "diverged");
        }
      } else if (value >= kWorseBy * *fired_at_) {
        fired_at_ = value;
        fired = true;
        describe(finding, step, value, threshold, "is still diverging");
      } else if (newest_.median() <= threshold) {
        if (++calm_ >= options_.window) {  // recovered: ready for the next incident
          fired_at_.reset();
          calm_ = 0;
          mark_cleared();
        }
      } else {
        calm_ = 0;
      }
    }
    if (!above) {
      level_values_.add(value);
      if (level_values_.size() >= kValuesForNoise) {
        noise_ = std::max(noise_, level_values_.log_step_noise());
      }
      const double level = level_values_.median();
      if (!best_ || level < *best_) {
        best_ = level;
        best_step_ = step;
      }
      if (!start_ && level_values_.size() == level_values_.capacity()) start_ = level;
    }
    return fired;
  }

 private:
  double factor() const {
    if (level_values_.size() < kValuesForNoise) return options_.early_factor;
    return std::max(options_.factor, std::exp(options_.noise_deviations * noise_));
  }

  // Above the best level by `factor`, or, once the loss has made real progress from its start
  // (fallen by kProgress of it), back over `undo_fraction` of that progress: a loss that climbs
  // from 0.3 back to its start of 0.69 has undone its training at 2.3x. Either beyond the noise.
  double threshold() const {
    const double by_factor = *best_ * factor();
    if (!start_ || *start_ - *best_ < kProgress * *start_) return by_factor;
    const double undone = *best_ + options_.undo_fraction * (*start_ - *best_);
    return std::min(by_factor,
                    std::max(undone, *best_ * std::exp(options_.noise_deviations * noise_)));
  }

  void describe(Finding& finding, std::int64_t step, double value, double threshold,
                const std::string& how) const {
    const double times = value / *best_;
    finding.tensors = {name_};
    finding.figures = {{"value", value, name_},
                       {"best_level", *best_, name_},
                       {"times_best", times, name_},
                       {"threshold", threshold, name_}};
    std::string undone;
    if (start_ && *start_ > *best_ && times < options_.factor) {
      undone = ", undoing " + format_rounded(100.0 * (value - *best_) / (*start_ - *best_)) +
               "% of its fall from " + format_rounded(*start_);
    }
    finding.message = name_ + " " + how + ": " + format_rounded(value) + " at step " +
                      std::to_string(step) + ", " + format_rounded(times) + "x its best level " +
                      format_rounded(*best_) + " (step " + std::to_string(best_step_) + ")" +
                      undone + "; lower the learning rate or clip gradients";
  }

  std::string name_;
  DivergenceRule::Options options_;
  RecentValues level_values_;  // the last `window` values not above the threshold
  RecentValues newest_;        // the last `confirm` values
  std::optional<double> best_;
  std::int64_t best_step_ = 0;
  std::optional<double> start_;  // the level of the first `window` values
  double noise_ = 0.0;
  int excursions_ = 0;
  std::optional<double> fired_at_;
  std::int64_t calm_ = 0;
  bool positive_ = true;
};

}  // namespace

std::unique_ptr<SeriesState> DivergenceRule::start(const SeriesInfo& series) const {
  return std::make_unique<DivergenceState>(series.display_name(), options_);
}

RuleSpec divergence_spec() {
  using Options = DivergenceRule::Options;
  const Options defaults;
  RuleSpec spec;
  spec.name = "Divergence";
  spec.aliases = {"divergence"};
  spec.description =
      "a loss that rises far above its best level and stays there, or jumps by an order of "
      "magnitude; judged against the series' own noise, from its first value";
  spec.parameters = {
      SeriesSelection::parameter(SeriesRole::Loss),
      {"window", "int", std::to_string(defaults.window),
       "values whose median is the level (and that a recovery must hold for)"},
      {"factor", "float", format_figure(defaults.factor),
       "how many times its best level a smooth loss must rise"},
      {"noise_deviations", "float", format_figure(defaults.noise_deviations),
       "for a noisy loss: how many standard deviations of its log values the rise must span"},
      {"confirm", "int", std::to_string(defaults.confirm),
       "values whose median must be above the threshold"},
      {"jump_factor", "float", format_figure(defaults.jump_factor),
       "a single value this many times the best level fires without confirmation"},
      {"early_factor", "float", format_figure(defaults.early_factor),
       "the factor before the series has 5 values to measure its noise"},
      {"undo_fraction", "float", format_figure(defaults.undo_fraction),
       "a loss that fell by 20% or more also diverges when it climbs back this much of its fall"}};
  spec.create_series = [](const RuleParameters& parameters) -> std::shared_ptr<SeriesRule> {
    ParameterReader reader("Divergence", parameters);
    auto selection = SeriesSelection::read(reader, SeriesRole::Loss);
    const Options preset;
    Options options;
    options.window = reader.integer("window", preset.window);
    if (options.window < 3) throw reader.invalid("window", "must be at least 3");
    options.factor = reader.number("factor", preset.factor);
    if (!(options.factor > 1.0)) throw reader.invalid("factor", "must be above 1");
    options.noise_deviations = reader.number("noise_deviations", preset.noise_deviations);
    if (!(options.noise_deviations >= 0.0)) {
      throw reader.invalid("noise_deviations", "must not be negative");
    }
    options.confirm = reader.integer("confirm", preset.confirm);
    if (options.confirm < 1) throw reader.invalid("confirm", "must be at least 1");
    options.jump_factor = reader.number("jump_factor", preset.jump_factor);
    if (!(options.jump_factor > 1.0)) throw reader.invalid("jump_factor", "must be above 1");
    options.early_factor = reader.number("early_factor", preset.early_factor);
    if (!(options.early_factor > 1.0)) throw reader.invalid("early_factor", "must be above 1");
    options.undo_fraction = reader.number("undo_fraction", preset.undo_fraction);
    if (!(options.undo_fraction > 0.0 && options.undo_fraction <= 1.0)) {
      throw reader.invalid("undo_fraction", "must be above 0 and at most 1");
    }
    reader.finish();
    return std::make_shared<DivergenceRule>(std::move(selection), options);
  };
  spec.create = series_rule_on_trial(spec.create_series);
  return spec;
}

}  // namespace rulestream
