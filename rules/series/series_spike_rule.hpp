#pragma once

// LossSpike and GradNormSpike: a value far above its series' recent robust level
// (spike_detector.hpp), on losses and on gradient norms. One class, two configurations.

#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_registry.hpp"
#include "rules/series_rule.hpp"
#include "rules/support/spike_detector.hpp"

namespace rulestream {

class SeriesSpikeRule final : public SeriesRule {
 public:
  SeriesSpikeRule(std::string name, SeriesSelection selection, SpikeOptions options)
      : name_(std::move(name)), selection_(std::move(selection)), options_(options) {}

  // LossSpike: loss series. Defaults: window 50, threshold 5, min_increase_percent 100 (a
  // loss at least twice its recent level: Keras' per-epoch running mean jumps by less at an
  // epoch's first batch), warmup 20.
  static RuleSpec loss_spike_spec();
  // GradNormSpike: gradient-norm series, with the same defaults.
  static RuleSpec grad_norm_spike_spec();

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

}  // namespace rulestream
