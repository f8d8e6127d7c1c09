#include "engine/graph/series_evaluator.hpp"

#include <algorithm>

namespace rulestream {

SeriesEvaluator::SeriesEvaluator(SeriesInfo info,
                                 const std::vector<std::shared_ptr<const SeriesRule>>& rules)
    : info_(std::move(info)) {
  for (std::size_t index = 0; index < rules.size(); ++index) {
    const SeriesRule* rule = rules[index].get();
    if (rule == nullptr || !rule->watches(info_)) continue;
    watches_.push_back({index, rule, rule->start(info_), 0});
    keep_ = std::max(keep_, rule->memory_points());
  }
}

void SeriesEvaluator::restart_at(std::int64_t step) {
  ++restarts_;
  // The kept values before `step`, oldest first.
  std::vector<std::pair<std::int64_t, double>> before;
  before.reserve(kept_.size());
  for (std::size_t i = 0; i < kept_.size(); ++i) {
    const auto& value = kept_[(kept_head_ + i) % kept_.size()];
    if (value.first < step) before.push_back(value);
  }
  kept_ = before;
  kept_head_ = 0;
  Finding ignored;
  for (Watch& watch : watches_) {
    watch.state = watch.series_rule->start(info_);
    for (const auto& [kept_step, kept_value] : kept_) {
      watch.state->add(kept_step, kept_value, ignored);  // judged before: not reported again
    }
    watch.state->take_cleared();
    watch.state->take_unjudged();
  }
}

void SeriesEvaluator::add(std::int64_t step, double value, std::vector<SeriesFinding>& findings) {
  if (last_step_ && step <= *last_step_) restart_at(step);
  last_step_ = step;
  for (Watch& watch : watches_) {
    Finding finding;
    if (watch.state->add(step, value, finding)) {
      findings.push_back({watch.rule, step, std::move(finding)});
    }
    // A value the rule could not judge (a step with no time) is no evaluation: a series none of
    // whose values were judged claims no all-clear.
    if (!watch.state->take_unjudged()) ++watch.evaluated;
    if (watch.state->take_cleared()) {
      Finding series;
      series.tensors = {info_.display_name()};
      findings.push_back({watch.rule, step, std::move(series), true});
    }
  }
  if (keep_ == 0) return;
  if (kept_.size() < keep_) {
    kept_.emplace_back(step, value);  // still filling: oldest at index 0 (kept_head_ stays 0)
  } else {
    kept_[kept_head_] = {step, value};  // overwrite the oldest
    if (++kept_head_ == keep_) kept_head_ = 0;
  }
}

void SeriesEvaluator::count_evaluations(std::vector<std::int64_t>& by_rule) const {
  for (const Watch& watch : watches_) by_rule.at(watch.rule) += watch.evaluated;
}

}  // namespace rulestream
