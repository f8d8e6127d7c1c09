#pragma once

// OverfittingTrend: a validation loss rising from its best while the training loss keeps
// falling, judged as a trend rather than as a fixed gap (a validation loss that sits 10-20%
// above training, as they do, is no overfitting). On each value of a validation loss series
// (paired with the training loss of its job as Overfit pairs them: SeriesInfo::group, where
// Lightning's _step and _epoch suffixes do not split a pair):
//
// - the best is the lowest validation value so far; a new best ends any incident;
// - it fires when `patience` validation values have come since the best without a new one, the
//   latest at least `min_rise_percent` above the best (or more, when the series is noisy:
//   exp(noise_deviations x the median absolute log change between its consecutive values,
//   over its last 64 changes) - 1), and the
//   training loss's level now (its mean over the values since the previous validation value,
//   or its last value before when there are none) is below its level at the best's validation
//   value: still learning the training set;
// - once per incident: it fires again only after a new best.
//
// When a job writes a training loss per step and one per epoch (Lightning's train_loss_step
// and train_loss_epoch), the epoch-level one is compared.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_registry.hpp"
#include "rules/series_rule.hpp"

namespace rulestream {

class OverfittingTrendRule final : public SeriesRule {
 public:
  struct Options {
    std::int64_t patience = 3;
    double min_rise_percent = 3.0;
    double noise_deviations = 3.0;
    std::int64_t start_step = 0;
  };

  OverfittingTrendRule(std::vector<NameRegex> regexes, Options options);

  static RuleSpec spec();

  std::string_view name() const override { return "OverfittingTrend"; }
  bool watches(const SeriesInfo& series) const override;
  std::unique_ptr<SeriesState> start(const SeriesInfo& series) const override;
  bool clears_itself() const override { return true; }
  std::size_t memory_points() const override { return 0; }
  std::string looks_for() const override {
    return "pairs of training and validation loss series (docs/tensorboard.md: which tags)";
  }
  std::vector<std::string> tag_regexes() const override;
  const Options& options() const { return options_; }

  // What the training and validation series of one group share; defined in the .cpp.
  struct Pair;

 private:
  std::vector<NameRegex> regexes_;
  Options options_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::shared_ptr<Pair>> pairs_;
};

}  // namespace rulestream
