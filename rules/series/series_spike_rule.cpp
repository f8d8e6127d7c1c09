#include "rules/series/series_spike_rule.hpp"

#include <cmath>

#include "rules/series_rule_on_trial.hpp"
#include "rules/support/rule_text.hpp"

namespace rulestream {
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

RuleSpec SeriesSpikeRule::loss_spike_spec() {
  return spike_spec("LossSpike", "loss_spike",
                    "a loss far above its recent robust level (a moving average and the "
                    "moving average of absolute deviations)",
                    SeriesRole::Loss, SpikeOptions{});
}

RuleSpec SeriesSpikeRule::grad_norm_spike_spec() {
  return spike_spec("GradNormSpike", "grad_norm_spike",
                    "a gradient norm far above its recent robust level", SeriesRole::GradientNorm,
                    SpikeOptions{});
}

}  // namespace rulestream
