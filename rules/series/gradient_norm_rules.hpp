#pragma once

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

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_registry.hpp"
#include "rules/series_rule.hpp"

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

  static RuleSpec spec();

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

  static RuleSpec spec();

  std::string_view name() const override { return "GradientVanishing"; }
  std::unique_ptr<SeriesState> start(const SeriesInfo& series) const override;
  bool clears_itself() const override { return true; }
  // The peak is history: a restart rebuilds from 10 windows of values.
  std::size_t memory_points() const override {
    return static_cast<std::size_t>(10 * options_.window);
  }
};

}  // namespace rulestream
