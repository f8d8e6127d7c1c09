#pragma once

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

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_registry.hpp"
#include "rules/series_rule.hpp"

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

  static RuleSpec spec();

  std::string_view name() const override { return "Divergence"; }
  std::unique_ptr<SeriesState> start(const SeriesInfo& series) const override;
  bool clears_itself() const override { return true; }
  // The best level is history; a state rebuilt from 10 windows of values has seen it in all
  // but the slowest runs.
  std::size_t memory_points() const override {
    return static_cast<std::size_t>(10 * options_.window);
  }
};

}  // namespace rulestream
