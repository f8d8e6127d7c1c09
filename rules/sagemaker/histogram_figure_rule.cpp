#include "rules/sagemaker/histogram_figure_rule.hpp"

#include "rules/support/rule_text.hpp"

namespace rulestream {
namespace {

class FigureState final : public SeriesState {
 public:
  FigureState(std::string name, const HistogramFigureRule::Options& options)
      : name_(std::move(name)),
        figure_(options.figure),
        below_(options.below),
        above_(options.above) {}

  bool add(std::int64_t step, double value, Finding& finding) override {
    const bool low = below_ && value < *below_;
    const bool high = above_ && value > *above_;
    if (!low && !high) return false;
    const double bound = low ? *below_ : *above_;
    finding.tensors = {name_};
    finding.figures = {{figure_, value, name_}, {"threshold", bound, std::nullopt}};
    finding.message = name_ + " " + format_figure(value) + (low ? " < " : " > ") + "threshold " +
                      format_figure(bound) + " at step " + std::to_string(step);
    return true;
  }

 private:
  std::string name_;
  std::string figure_;
  std::optional<double> below_;
  std::optional<double> above_;
};

}  // namespace

bool HistogramFigureRule::watches(const SeriesInfo& series) const {
  if (series.figure != options_.figure) return false;
  if (!options_.regexes.empty()) return any_found_in(options_.regexes, series.tag);
  return !options_.role || series.role == *options_.role;
}

std::unique_ptr<SeriesState> HistogramFigureRule::start(const SeriesInfo& series) const {
  return std::make_unique<FigureState>(series.display_name(), options_);
}

std::string HistogramFigureRule::looks_for() const {
  std::string histograms = options_.role ? std::string(series_role_name(*options_.role)) +
                                               " histograms (docs/tensorboard.md: which tags)"
                                         : std::string("histograms");
  if (!options_.regexes.empty()) {
    histograms = "histograms whose tag matches";
    for (const auto& regex : options_.regexes) histograms += " '" + regex.pattern() + "'";
  }
  return histograms + " (their " + options_.figure + ")";
}

std::vector<std::string> HistogramFigureRule::tag_regexes() const {
  std::vector<std::string> patterns;
  for (const auto& regex : options_.regexes) patterns.push_back(regex.pattern());
  return patterns;
}

}  // namespace rulestream
