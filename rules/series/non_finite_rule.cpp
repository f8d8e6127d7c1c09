#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "rules/builtin_rules.hpp"
#include "rules/rule_registry.hpp"
#include "rules/series_rule.hpp"
#include "rules/series_rule_on_trial.hpp"
#include "rules/support/rule_text.hpp"

namespace rulestream {

// NonFinite: the first NaN or infinity in a series of scalars (every series by default: a
// loss, a metric, a learning rate). It fires once per series, at its first non-finite value;
// a series that turns finite and non-finite again does not fire again (ExplodingTensor and
// LossSpike say more about a run that is diverging). Parameters: tag_regex.
class NonFiniteRule final : public SeriesRule {
 public:
  explicit NonFiniteRule(SeriesSelection selection) : selection_(std::move(selection)) {}

  std::string_view name() const override { return "NonFinite"; }
  bool watches(const SeriesInfo& series) const override { return selection_.watches(series); }
  std::unique_ptr<SeriesState> start(const SeriesInfo& series) const override;
  std::size_t memory_points() const override { return 0; }
  std::string looks_for() const override { return selection_.describe(); }
  std::vector<std::string> tag_regexes() const override { return selection_.patterns(); }

 private:
  SeriesSelection selection_;
};

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

RuleSpec non_finite_spec() {
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
