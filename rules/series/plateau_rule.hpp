#pragma once

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

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_registry.hpp"
#include "rules/series_rule.hpp"

namespace rulestream {

class PlateauRule final : public SeriesRule {
 public:
  struct Options {
    std::int64_t patience = 10;           // learning-rate values at 0
    std::int64_t patience_unchanged = 3;  // loss values equal to the one before
    double tolerance = 1e-5;              // relative change that counts as none
  };

  explicit PlateauRule(Options options) : options_(options) {}

  static RuleSpec spec();

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

}  // namespace rulestream
