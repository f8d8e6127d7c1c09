#pragma once

// A figure of TensorBoard histograms (a gradient's mean absolute value, a tensor's variance)
// outside its bounds: the series form of VanishingGradient and TensorVariance, which on an
// smdebug trial read the tensors themselves. Each histogram value is judged on its own.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/name_regex.hpp"
#include "rules/series_rule.hpp"

namespace rulestream {

class HistogramFigureRule final : public SeriesRule {
 public:
  struct Options {
    std::string rule;                // "VanishingGradient": the rule's name in events
    std::string figure;              // "abs_mean", "variance": the histogram figure judged
    std::optional<SeriesRole> role;  // histograms of this role only (Gradient); nullopt: all
    std::vector<NameRegex> regexes;  // if any: histograms whose tag one of them finds
    std::optional<double> below;     // fires when the figure is below this
    std::optional<double> above;     // or above this
  };

  explicit HistogramFigureRule(Options options) : options_(std::move(options)) {}

  std::string_view name() const override { return options_.rule; }
  bool watches(const SeriesInfo& series) const override;
  std::unique_ptr<SeriesState> start(const SeriesInfo& series) const override;
  std::size_t memory_points() const override { return 0; }
  std::string looks_for() const override;
  std::vector<std::string> tag_regexes() const override;

 private:
  Options options_;
};

}  // namespace rulestream
