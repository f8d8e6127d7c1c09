#include "rules/divergence_rule.hpp"

#include <cmath>
#include <optional>

#include "rules/recent_values.hpp"
#include "rules/rule_text.hpp"
#include "rules/series_rule_on_trial.hpp"

namespace rulestream {
namespace {

// Below this many level values the noise cannot be measured: the early factor applies.
constexpr std::size_t kValuesForNoise = 5;
// An excursion: a value above this multiple of the level (below the jump factor's reach).
constexpr double kExcursion = 3.0;
// This many excursions that came back make a series spiky: single jumps no longer fire.
constexpr int kSpikyAfter = 3;
// A firing is updated when the loss reaches this multiple of the value it fired at.
constexpr double kWorseBy = 10.0;

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
      const double threshold = *best_ * factor();
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
        }
      } else {
        calm_ = 0;
      }
    }
    if (!above) {
      level_values_.add(value);
      if (level_values_.size() >= kValuesForNoise) {
        noise_ = std::max(noise_, level_values_.log_spread());
      }
      const double level = level_values_.median();
      if (!best_ || level < *best_) {
        best_ = level;
        best_step_ = step;
      }
    }
    return fired;
  }

 private:
  double factor() const {
    if (level_values_.size() < kValuesForNoise) return options_.early_factor;
    return std::max(options_.factor, std::exp(options_.noise_deviations * noise_));
  }

  void describe(Finding& finding, std::int64_t step, double value, double threshold,
                const std::string& how) const {
    const double times = value / *best_;
    finding.tensors = {name_};
    finding.figures = {{"value", value, name_},
                       {"best_level", *best_, name_},
                       {"times_best", times, name_},
                       {"threshold", threshold, name_}};
    finding.message = name_ + " " + how + ": " + format_rounded(value) + " at step " +
                      std::to_string(step) + ", " + format_rounded(times) + "x its best level " +
                      format_rounded(*best_) + " (step " + std::to_string(best_step_) +
                      "); lower the learning rate or clip gradients";
  }

  std::string name_;
  DivergenceRule::Options options_;
  RecentValues level_values_;  // the last `window` values not above the threshold
  RecentValues newest_;        // the last `confirm` values
  std::optional<double> best_;
  std::int64_t best_step_ = 0;
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

RuleSpec DivergenceRule::spec() {
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
       "the factor before the series has 5 values to measure its noise"}};
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
    reader.finish();
    return std::make_shared<DivergenceRule>(std::move(selection), options);
  };
  spec.create = series_rule_on_trial(spec.create_series);
  return spec;
}

}  // namespace rulestream
