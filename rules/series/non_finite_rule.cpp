#include "rules/series/non_finite_rule.hpp"

#include <cmath>

#include "rules/series_rule_on_trial.hpp"
#include "rules/support/rule_text.hpp"

namespace rulestream {
namespace {

class NonFiniteState final : public SeriesState {
 public:
  explicit NonFiniteState(std::string name) : name_(std::move(name)) {}

  bool add(std::int64_t step, double value, Finding& finding) override {
    if (fired_ || std::isfinite(value)) return false;
    fired_ = true;
    finding.tensors = {name_};
    finding.figures = {{"value", value, name_}};
    finding.message = name_ + " is " + format_figure(value) + " at step " + std::to_string(step) +
                      ": its first non-finite value";
    return true;
  }

 private:
  std::string name_;
  bool fired_ = false;
};

}  // namespace

std::unique_ptr<SeriesState> NonFiniteRule::start(const SeriesInfo& series) const {
  return std::make_unique<NonFiniteState>(series.display_name());
}

RuleSpec NonFiniteRule::spec() {
  RuleSpec spec;
  spec.name = "NonFinite";
  spec.aliases = {"non_finite"};
  spec.description = "the first NaN or infinity in a series of scalars (a loss, a metric)";
  spec.parameters = {SeriesSelection::parameter(std::nullopt)};
  spec.create_series = [](const RuleParameters& parameters) -> std::shared_ptr<SeriesRule> {
    ParameterReader reader("NonFinite", parameters);
    auto selection = SeriesSelection::read(reader, std::nullopt);
    reader.finish();
    return std::make_shared<NonFiniteRule>(std::move(selection));
  };
  spec.create = series_rule_on_trial(spec.create_series);
  return spec;
}

}  // namespace rulestream
