// Series rules over smdebug trials (SeriesRuleOnTrial): the same rules the TensorBoard pipeline
// runs, built by the registry for a trial and invoked step by step.
#include "rules/series_rule_on_trial.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "rules/rule_registry.hpp"
#include "tests/support/series_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::Steps;
using testing::TempDir;

std::unique_ptr<Rule> rule_on(const Trial& trial, const std::string& name,
                              const RuleParameters& parameters = {}) {
  return RuleRegistry::builtin().create(name, RuleContext{trial, {}}, parameters);
}

TEST(SeriesRuleOnTrialTest, NonFiniteFiresAtTheFirstNaNLoss) {
  TempDir dir;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Trial trial =
      testing::write_job(dir.path() / "job", testing::loss_steps({{Mode::Train, 1.0},
                                                                  {Mode::Train, 2.0},
                                                                  {Mode::Train, nan},
                                                                  {Mode::Train, 3.0},
                                                                  {Mode::Train, nan}}));
  const auto rule = rule_on(trial, "NonFinite");
  const InvokeResult result = invoke_rule(*rule);
  EXPECT_EQ(result.triggered_steps, Steps{2});
  EXPECT_EQ(result.steps_evaluated, 5);
}

TEST(SeriesRuleOnTrialTest, LossSpikeFollowsTrainAndEvalLossesApart) {
  // 30 TRAIN losses of 1.0, each followed by an EVAL loss of 5.0, then a TRAIN loss of 4.0: four
  // times the TRAIN level (a spike), though below every EVAL loss (another series).
  TempDir dir;
  std::vector<std::pair<Mode, double>> losses;
  for (int i = 0; i < 30; ++i) {
    losses.emplace_back(Mode::Train, 1.0);
    losses.emplace_back(Mode::Eval, 5.0);
  }
  losses.emplace_back(Mode::Train, 4.0);
  const Trial trial = testing::write_job(dir.path() / "job", testing::loss_steps(losses));
  const auto rule = rule_on(trial, "LossSpike");
  EXPECT_EQ(invoke_rule(*rule).triggered_steps, Steps{60});
  EXPECT_EQ(rule->last_finding().tensors, std::vector<std::string>{"CrossEntropyLoss_output_0"});
}

TEST(SeriesRuleOnTrialTest, ATrialWithoutWhatTheRuleWatchesEvaluatesNothing) {
  TempDir dir;
  std::vector<testing::SeriesStep> steps(3);
  for (auto& step : steps) step.tensors.push_back({"dense/weights", testing::floats({1.0, 2.0})});
  const Trial trial = testing::write_job(dir.path() / "job", steps);
  const auto rule = rule_on(trial, "LossSpike");
  const InvokeResult result = invoke_rule(*rule);
  EXPECT_EQ(result.steps_evaluated, 0);  // the pipeline's status is then Error, not NoIssuesFound
  EXPECT_TRUE(result.triggered_steps.empty());
}

}  // namespace
}  // namespace rulestream
