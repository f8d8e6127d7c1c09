#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_registry.hpp"
#include "rules/series_rule.hpp"

namespace rulestream {

// NonFinite: the first NaN or infinity in a series of scalars (every series by default: a
// loss, a metric, a learning rate). It fires once per series, at its first non-finite value;
// a series that turns finite and non-finite again does not fire again (ExplodingTensor and
// LossSpike say more about a run that is diverging). Parameters: tag_regex.
class NonFiniteRule final : public SeriesRule {
 public:
  explicit NonFiniteRule(SeriesSelection selection) : selection_(std::move(selection)) {}

  static RuleSpec spec();

  std::string_view name() const override { return "NonFinite"; }
  bool watches(const SeriesInfo& series) const override { return selection_.watches(series); }
  std::unique_ptr<SeriesState> start(const SeriesInfo& series) const override;
  std::size_t memory_points() const override { return 0; }
  std::string looks_for() const override { return selection_.describe(); }
  std::vector<std::string> tag_regexes() const override { return selection_.patterns(); }

 private:
  SeriesSelection selection_;
};

}  // namespace rulestream
