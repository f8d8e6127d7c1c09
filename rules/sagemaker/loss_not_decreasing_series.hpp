#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/mode.hpp"
#include "rules/rule_registry.hpp"
#include "rules/series_rule.hpp"

namespace rulestream {

// LossNotDecreasing over series of scalars (a TensorBoard logdir's losses): the comparison
// LossNotDecreasingRule makes, with a series' own steps as the mode's steps. At a value no
// sooner than num_steps after the series' last comparison, the value is compared with the
// newest value at least num_steps behind, and the rule fires when it did not fall by more than
// diff_percent: value > base * (1 - diff_percent / 100). A series' state keeps the values of its
// last num_steps steps at most.
class LossNotDecreasingSeries final : public SeriesRule {
 public:
  struct Options {
    std::int64_t num_steps = 10;
    double diff_percent = 0.1;
    double increase_threshold_percent = 5.0;
    Mode mode = Mode::Global;  // GLOBAL: every series; else the series of that mode
  };

  LossNotDecreasingSeries(SeriesSelection selection, Options options)
      : selection_(std::move(selection)), options_(options) {}

  std::string_view name() const override { return "LossNotDecreasing"; }
  bool watches(const SeriesInfo& series) const override;
  std::unique_ptr<SeriesState> start(const SeriesInfo& series) const override;
  std::size_t memory_points() const override {
    return static_cast<std::size_t>(options_.num_steps) + 1;
  }
  std::string looks_for() const override { return selection_.describe(); }
  std::vector<std::string> tag_regexes() const override { return selection_.patterns(); }

 private:
  SeriesSelection selection_;
  Options options_;
};

}  // namespace rulestream
