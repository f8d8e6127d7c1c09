#pragma once

// A series rule run over an smdebug trial, as any Rule: at each global step, the value of each
// scalar tensor the rule watches feeds the state of its series, one series per tensor and mode
// (a loss saved at TRAIN and at EVAL steps is two series). The candidates are the tensors of the
// `losses` (role loss) and `scalars` collections and those the rule's tag_regex names; and, for
// rules that watch gradient norms, the step's gradient norm: the square root of the sum of the
// squared L2 norms of the `gradients` collection's tensors (from their reductions), as the
// series "gradient_norm".
//
// The values are read ahead (Rule::reads_ahead): what a step's series hold depends on the step
// alone, and only feeding them to their states is serial. Reading (listing the candidates,
// looking each value up, summing the gradients' norms) is nearly all of the rule's work.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/series_rule.hpp"

namespace rulestream {

class SeriesRuleOnTrial final : public Rule {
 public:
  SeriesRuleOnTrial(Trial base_trial, std::shared_ptr<const SeriesRule> rule);

  std::string_view name() const override { return rule_->name(); }
  bool invoke_at_step(std::int64_t step) override;
  RequiredTensors required_tensors() const override;
  bool reads_ahead() const override { return true; }
  bool clears_itself() const override { return rule_->clears_itself(); }
  std::vector<std::string> take_cleared() override { return std::exchange(cleared_, {}); }
  std::unique_ptr<StepReading> read_step(const Trial& trial, std::int64_t step) const override;

 private:
  bool feed(const SeriesInfo& info, std::int64_t step, double value, Finding& finding);

  std::shared_ptr<const SeriesRule> rule_;
  bool watches_gradient_norm_ = false;
  std::map<std::pair<std::string, Mode>, std::unique_ptr<SeriesState>> states_;
  std::vector<std::string> cleared_;  // take_cleared: the series cleared at the step judged
};

// A RuleSpec::create for a series rule: builds it with `create_series` and runs it over the
// context's base trial.
std::function<std::unique_ptr<Rule>(const RuleContext&, const RuleParameters&)>
series_rule_on_trial(
    std::function<std::shared_ptr<SeriesRule>(const RuleParameters&)> create_series);

}  // namespace rulestream
