#include "engine/graph/series_evaluator.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "rules/rule_registry.hpp"

namespace rulestream {
namespace {

std::vector<std::shared_ptr<const SeriesRule>> rules_of(
    const std::vector<std::pair<std::string, RuleParameters>>& configured) {
  std::vector<std::shared_ptr<const SeriesRule>> rules;
  for (const auto& [name, parameters] : configured) {
    rules.push_back(RuleRegistry::builtin().create_series(name, parameters));
  }
  return rules;
}

SeriesInfo loss_series() {
  SeriesInfo info;
  info.run = "train";
  info.tag = "loss";
  info.role = SeriesRole::Loss;
  return info;
}

// (rule index, step) of each condition met.
std::vector<std::pair<std::size_t, std::int64_t>> where(const std::vector<SeriesFinding>& found) {
  std::vector<std::pair<std::size_t, std::int64_t>> out;
  for (const auto& finding : found) out.emplace_back(finding.rule, finding.step);
  return out;
}

TEST(SeriesEvaluatorTest, ARestartReplacesTheKeptValuesFromItsStepOn) {
  // LossNotDecreasing (num_steps 10) keeps its last 11 values. Steps 0..15 fall from 100
  // (compared at 10: fell; kept: steps 5..15). The run restarts at step 10 at 200 and stays
  // there. The restart drops the kept steps 10..15; the state is rebuilt from steps 5..9. At
  // 10..14 no kept value is 10 steps back; at 15, 200 did not fall from step 5's 95: fires.
  // The next comparison is due at 25, after the last value.
  const auto rules = rules_of({{"LossNotDecreasing", {}}});
  SeriesEvaluator evaluator(loss_series(), rules);
  std::vector<SeriesFinding> found;
  for (int step = 0; step <= 15; ++step) evaluator.add(step, 100.0 - step, found);
  EXPECT_TRUE(found.empty());
  for (int step = 10; step <= 20; ++step) evaluator.add(step, 200.0, found);
  EXPECT_EQ(where(found), (std::vector<std::pair<std::size_t, std::int64_t>>{{0, 15}}));
  ASSERT_EQ(found.size(), 1U);
  EXPECT_EQ(found[0].finding.figures.at(1).value, 95.0);  // base_loss
  EXPECT_EQ(evaluator.restarts(), 1);
  std::vector<std::int64_t> evaluated(1, 0);
  evaluator.count_evaluations(evaluated);
  EXPECT_EQ(evaluated[0], 16 + 11);  // the values rebuilt from at the restart are not counted
}

TEST(SeriesEvaluatorTest, ADuplicateStepIsARestartAtThatStep) {
  // NonFinite keeps nothing: after a restart it judges the new attempt afresh, so a run that
  // hits NaN again after resuming is reported again.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto rules = rules_of({{"NonFinite", {}}, {"LossSpike", {}}});
  SeriesEvaluator evaluator(loss_series(), rules);
  std::vector<SeriesFinding> found;
  evaluator.add(0, 1.0, found);
  evaluator.add(1, nan, found);
  evaluator.add(1, 1.0, found);  // the same step written again
  evaluator.add(2, nan, found);
  EXPECT_EQ(where(found), (std::vector<std::pair<std::size_t, std::int64_t>>{{0, 1}, {0, 2}}));
  EXPECT_EQ(evaluator.restarts(), 1);
}

TEST(SeriesEvaluatorTest, OnlyRulesThatWatchTheSeriesGetAState) {
  const auto rules = rules_of({{"GradNormSpike", {}}, {"LossSpike", {}}});
  EXPECT_TRUE(SeriesEvaluator(loss_series(), rules).watched());
  SeriesInfo accuracy = loss_series();
  accuracy.tag = "accuracy";
  accuracy.role = SeriesRole::Other;
  EXPECT_FALSE(SeriesEvaluator(accuracy, rules).watched());
  std::vector<std::shared_ptr<const SeriesRule>> none{nullptr};  // a rule without series form
  EXPECT_FALSE(SeriesEvaluator(loss_series(), none).watched());
}

}  // namespace
}  // namespace rulestream
