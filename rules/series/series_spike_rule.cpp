// LossSpike and GradNormSpike: a value far above its series' recent robust level
// (rules/support/spike_detector.hpp), on losses and on gradient norms. One class, two
// configurations.

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "rules/builtin_rules.hpp"
#include "rules/rule_registry.hpp"
#include "rules/series_rule.hpp"
#include "rules/series_rule_on_trial.hpp"
#include "rules/support/rule_text.hpp"
#include "rules/support/spike_detector.hpp"

namespace rulestream {

class SeriesSpikeRule final : public SeriesRule {
 public:
  SeriesSpikeRule(std::string name, SeriesSelection selection, SpikeOptions options)
      : name_(std::move(name)), selection_(std::move(selection)), options_(options) {}

  std::string_view name() const override { return name_; }
  bool watches(const SeriesInfo& series) const override { return selection_.watches(series); }
  std::unique_ptr<SeriesState> start(const SeriesInfo& series) const override;
  // The averages forget at 2 / (window + 1) a value: after 4 windows what came before weighs
  // about 2% of the level (a state rebuilt from that many values is nearly the same).
  std::size_t memory_points() const override {
    return static_cast<std::size_t>(4 * options_.window + options_.warmup);
  }
  std::string looks_for() const override { return selection_.describe(); }
  std::vector<std::string> tag_regexes() const override { return selection_.patterns(); }
  const SpikeOptions& options() const { return options_; }

 private:
  std::string name_;
  SeriesSelection selection_;
  SpikeOptions options_;
};

namespace {

class SpikeState final : public SeriesState {
 public:
  SpikeState(std::string name, SpikeOptions options)
      : name_(std::move(name)), options_(options), detector_(options) {}

  bool add(std::int64_t step, double value, Finding& finding) override {
    if (!std::isfinite(value)) return false;  // NonFinite's business, and no level
    const SpikeVerdict verdict = detector_.add(value);
    if (!verdict.spike) return false;
    finding.tensors = {name_};
    finding.figures = {{"value", value, name_},
                       {"level", verdict.level, name_},
                       {"spread", verdict.spread, name_},
                       {"deviations", verdict.deviations, name_},
                       {"threshold", options_.threshold, std::nullopt}};
    finding.message = name_ + " " + format_figure(value) + " at step " + std::to_string(step) +
                      " is " +
                      (std::isinf(verdict.deviations)
                           ? std::string("above a series that held still")
                           : format_figure(verdict.deviations) + " robust deviations") +
                      " above its recent level " + format_figure(verdict.level) + " (threshold " +
                      format_figure(options_.threshold) + ")";
    return true;
  }

 private:
  std::string name_;
  SpikeOptions options_;
  SpikeDetector detector_;
};

SpikeOptions read_spike_options(ParameterReader& reader, SpikeOptions defaults) {
  SpikeOptions options = defaults;
  options.window = reader.integer("window", defaults.window);
  if (options.window < 1) throw reader.invalid("window", "must be at least 1");
  options.threshold = reader.number("threshold", defaults.threshold);
  if (!(options.threshold > 0.0)) throw reader.invalid("threshold", "must be positive");
  const double percent = reader.number("min_increase_percent", defaults.min_increase * 100.0);
  if (!(percent >= 0.0)) throw reader.invalid("min_increase_percent", "must not be negative");
  options.min_increase = percent / 100.0;
  options.warmup = reader.integer("warmup", defaults.warmup);
  if (options.warmup < 1) throw reader.invalid("warmup", "must be at least 1");
  return options;
}

std::vector<ParameterSpec> spike_parameters(SeriesRole role, const SpikeOptions& defaults) {
  return {SeriesSelection::parameter(role),
          {"window", "int", std::to_string(defaults.window),
           "the span, in values, of the moving averages of the level and of the spread"},
          {"threshold", "float", format_figure(defaults.threshold),
           "how many robust deviations above the level a spike is"},
          {"min_increase_percent", "float", format_figure(defaults.min_increase * 100.0),
           "and how far above the level, in percent of its magnitude, at least"},
          {"warmup", "int", std::to_string(defaults.warmup),
           "values of a series that only teach the rule its level"}};
}

RuleSpec spike_spec(std::string name, std::string alias, std::string description, SeriesRole role,
                    SpikeOptions defaults) {
  RuleSpec spec;
  spec.name = name;
  spec.aliases = {std::move(alias)};
  spec.description = std::move(description);
  spec.parameters = spike_parameters(role, defaults);
  spec.create_series = [name, role,
                        defaults](const RuleParameters& parameters) -> std::shared_ptr<SeriesRule> {
    ParameterReader reader(name, parameters);
    auto selection = SeriesSelection::read(reader, role);
    const SpikeOptions options = read_spike_options(reader, defaults);
    reader.finish();
    return std::make_shared<SeriesSpikeRule>(name, std::move(selection), options);
  };
  spec.create = series_rule_on_trial(spec.create_series);
  return spec;
}

}  // namespace

std::unique_ptr<SeriesState> SeriesSpikeRule::start(const SeriesInfo& series) const {
  return std::make_unique<SpikeState>(series.display_name(), options_);
}

// LossSpike: loss series. Defaults: window 50, threshold 5, min_increase_percent 100 (a loss at
// least twice its recent level: Keras' per-epoch running mean jumps by less at an epoch's first
// batch), warmup 20.
RuleSpec loss_spike_spec() {
  return spike_spec("LossSpike", "loss_spike",
                    "a loss far above its recent robust level (a moving average and the "
                    "moving average of absolute deviations)",
                    SeriesRole::Loss, SpikeOptions{});
}

// GradNormSpike: gradient-norm series, with the same defaults.
RuleSpec grad_norm_spike_spec() {
  return spike_spec("GradNormSpike", "grad_norm_spike",
                    "a gradient norm far above its recent robust level", SeriesRole::GradientNorm,
                    SpikeOptions{});
}

}  // namespace rulestream
