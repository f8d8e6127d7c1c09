#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <vector>

#include "apps/simulator/job_simulator.hpp"
#include "core/model/exceptions.hpp"
#include "rules/rule.hpp"
#include "stages/format/trial_writer.hpp"
#include "tests/support/rule_outcomes.hpp"
#include "tests/support/test_support.hpp"
#include "trial/api/tensor.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {
namespace {

using testing::TempDir;

// A rule whose outcome at each step is set by the test, and that records how it was called.
class ScriptedRule final : public Rule {
 public:
  struct Script {
    std::set<std::int64_t> fire;
    std::set<std::int64_t> tensor_missing;  // throws TensorUnavailableForStep
    std::set<std::int64_t> unknown_tensor;  // asks for a tensor the job never saved
    std::set<std::int64_t> end_rule;        // condition met, and the rule is done
    std::set<std::int64_t> fail;            // an error that is not about missing data
  };

  ScriptedRule(Trial trial, Script script, std::vector<Trial> others = {})
      : Rule(std::move(trial), std::move(others)), script_(std::move(script)) {}

  std::string_view name() const override { return "Scripted"; }

  bool invoke_at_step(std::int64_t step) override {
    invoked.push_back(step);
    bool pinned = base_trial().is_pinned();
    for (const Trial& other : other_trials()) pinned = pinned && other.is_pinned();
    pinned_while_invoked.push_back(pinned);
    if (!other_trials().empty()) others_last_step.push_back(other_trials().front().steps().back());
    if (script_.tensor_missing.contains(step)) {
      throw TensorUnavailableForStep("gradient/x", step, Mode::Global);
    }
    if (script_.unknown_tensor.contains(step)) base_trial().tensor("never_saved");
    if (script_.end_rule.contains(step)) throw RuleEvaluationConditionMet("Scripted", step, true);
    if (script_.fail.contains(step)) throw std::runtime_error("scripted failure");
    if (script_.fire.contains(step)) {
      report({.tensors = {"t"}, .figures = {{"step", static_cast<double>(step)}}, .message = "m"});
      return true;
    }
    return false;
  }

  bool pinned_now() const { return base_trial().is_pinned(); }

  std::vector<std::int64_t> invoked;
  std::vector<bool> pinned_while_invoked;
  std::vector<std::int64_t> others_last_step;  // the first other trial's, as the step saw it

 private:
  Script script_;
};

// A finished job of 10 TRAIN steps of which the even ones were saved: steps 1, 3, 5, 7 are
// StepUnavailable, and 9 (after the last saved step, 8) is NoMoreData.
class InvokeRuleTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    JobSimulatorOptions options;
    options.output = dir_->path() / "job";
    options.steps = 10;
    options.save_interval = 2;
    options.tensor_size = 16;
    JobSimulator(options).run();
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  // The job is complete when opened: no grace period for late files.
  static Trial trial() {
    return Trial::open((dir_->path() / "job").string(),
                       {.end_of_job_grace = std::chrono::milliseconds{0}});
  }

  static TempDir* dir_;
};
TempDir* InvokeRuleTest::dir_ = nullptr;

TEST_F(InvokeRuleTest, SkipsUnsavedStepsAndMissingTensorsAndEndsWithTheData) {
  ScriptedRule rule(trial(), {.fire = {4, 8}, .tensor_missing = {2}, .unknown_tensor = {6}});
  const InvokeResult result = invoke_rule(rule);
  EXPECT_EQ(result.triggered_steps, (std::vector<std::int64_t>{4, 8}));
  EXPECT_EQ(result.steps_evaluated, 3);  // 0, 4 and 8: 2 and 6 had missing data
  EXPECT_EQ(rule.invoked, (std::vector<std::int64_t>{0, 2, 4, 6, 8}));
}

TEST_F(InvokeRuleTest, RecordsEveryStepsOutcomeAsTheSamplesReferenceDoes) {
  ScriptedRule rule(trial(), {.fire = {4}, .tensor_missing = {2}});
  const auto run = testing::run_recording_outcomes(rule);
  const std::map<std::int64_t, std::string> expected{{0, "False"},
                                                     {1, "StepUnavailable"},
                                                     {2, "TensorUnavailableForStep"},
                                                     {3, "StepUnavailable"},
                                                     {4, "True"},
                                                     {5, "StepUnavailable"},
                                                     {6, "False"},
                                                     {7, "StepUnavailable"},
                                                     {8, "False"},
                                                     {9, "NoMoreData"}};
  EXPECT_EQ(run.per_step_outcome, expected);
  EXPECT_EQ(run.ended_with, "NoMoreData");
}

TEST_F(InvokeRuleTest, EndStepIsExclusive) {
  ScriptedRule rule(trial(), {.fire = {4}});
  EXPECT_TRUE(invoke_rule(rule, 0, 4).triggered_steps.empty());
  EXPECT_EQ(rule.invoked, (std::vector<std::int64_t>{0, 2}));
  EXPECT_EQ(invoke_rule(rule, 4, 5).triggered_steps, (std::vector<std::int64_t>{4}));
  EXPECT_EQ(invoke_rule(rule, 5, 5).steps_evaluated, 0);
}

TEST_F(InvokeRuleTest, StartsAtStartStep) {
  ScriptedRule rule(trial(), {.fire = {2, 6}});
  EXPECT_EQ(invoke_rule(rule, 5).triggered_steps, (std::vector<std::int64_t>{6}));
  EXPECT_EQ(rule.invoked, (std::vector<std::int64_t>{6, 8}));
}

TEST_F(InvokeRuleTest, RaiseEvalCondThrowsTheFirstMetCondition) {
  ScriptedRule rule(trial(), {.fire = {4, 6}});
  try {
    invoke_rule(rule, 0, std::nullopt, true);
    FAIL() << "expected RuleEvaluationConditionMet";
  } catch (const RuleEvaluationConditionMet& met) {
    EXPECT_EQ(met.rule(), "Scripted");
    EXPECT_EQ(met.step(), 4);
    EXPECT_FALSE(met.end_of_rule());
  }
  EXPECT_EQ(rule.invoked, (std::vector<std::int64_t>{0, 2, 4}));
}

TEST_F(InvokeRuleTest, EndOfRuleStopsTheLoop) {
  ScriptedRule rule(trial(), {.fire = {2}, .end_rule = {4}});
  const InvokeResult result = invoke_rule(rule);
  EXPECT_EQ(result.triggered_steps, (std::vector<std::int64_t>{2, 4}));
  EXPECT_EQ(rule.invoked, (std::vector<std::int64_t>{0, 2, 4}));
}

TEST_F(InvokeRuleTest, OtherErrorsPropagate) {
  ScriptedRule rule(trial(), {.fail = {4}});
  EXPECT_THROW(invoke_rule(rule), std::runtime_error);
  EXPECT_EQ(rule.invoked, (std::vector<std::int64_t>{0, 2, 4}));
  EXPECT_FALSE(rule.pinned_now()) << "the pinned view must be released on an exception";
}

TEST_F(InvokeRuleTest, InvokeWaitsForTheStepAndReportsWhyItCannot) {
  ScriptedRule rule(trial(), {.fire = {2}});
  EXPECT_NO_THROW(rule.invoke(0));
  EXPECT_THROW(rule.invoke(3), StepUnavailable);
  EXPECT_THROW(rule.invoke(9), NoMoreData);
  EXPECT_THROW(rule.invoke(1000), NoMoreData);
  try {
    rule.invoke(2);
    FAIL() << "expected RuleEvaluationConditionMet";
  } catch (const RuleEvaluationConditionMet& met) {
    EXPECT_EQ(met.rule(), "Scripted");
    EXPECT_EQ(met.step(), 2);
  }
  EXPECT_EQ(rule.invoked, (std::vector<std::int64_t>{0, 2}));
}

TEST_F(InvokeRuleTest, EvaluatesOnPinnedViewsOnly) {
  const Trial other = trial();
  ScriptedRule rule(trial(), {.fire = {4}}, {other});
  EXPECT_FALSE(rule.pinned_now());
  invoke_rule(rule);
  EXPECT_EQ(rule.pinned_while_invoked, std::vector<bool>(rule.invoked.size(), true));
  EXPECT_FALSE(rule.pinned_now());
}

TEST_F(InvokeRuleTest, FindingBelongsToTheLastInvocation) {
  ScriptedRule rule(trial(), {.fire = {4}});
  EXPECT_THROW(rule.invoke(4), RuleEvaluationConditionMet);
  EXPECT_EQ(rule.last_finding().tensors, (std::vector<std::string>{"t"}));
  EXPECT_EQ(rule.last_finding().figures, (std::vector<Figure>{{"step", 4.0, std::nullopt}}));
  EXPECT_EQ(rule.last_finding().message, "m");
  rule.invoke(6);
  EXPECT_TRUE(rule.last_finding().tensors.empty());
  EXPECT_TRUE(rule.last_finding().message.empty());
}

TEST(InvokeRuleLiveTest, EndStepBoundsARunningJob) {
  // Without the end marker, invoke_rule would wait for step 10 forever; end_step stops it.
  TempDir dir;
  JobSimulatorOptions options;
  options.output = dir.path() / "job";
  options.steps = 10;
  options.tensor_size = 16;
  options.write_end_marker = false;
  JobSimulator(options).run();
  ScriptedRule rule(Trial::open(options.output.string()), {.fire = {9}});
  const InvokeResult result = invoke_rule(rule, 0, 10);
  EXPECT_EQ(result.triggered_steps, (std::vector<std::int64_t>{9}));
  EXPECT_EQ(result.steps_evaluated, 10);
}

// A live trial of one worker with steps [0, steps) of one scalar, and its writer to add more.
struct LiveJob {
  LiveJob(const std::filesystem::path& root, std::int64_t steps)
      : writer({.root = root, .worker = "worker_0"}) {
    CollectionsFile collections;
    collections.num_workers = 1;
    writer.write_collections(collections);
    for (std::int64_t step = 0; step < steps; ++step) write(step);
  }
  void write(std::int64_t step) {
    writer.begin_step(step, Mode::Train, step);
    const std::vector<float> loss{static_cast<float>(step)};
    writer.add_tensor("loss", TensorValue::from_values(DType::Float32, Shape{}, loss));
    writer.end_step();
  }
  TrialWriter writer;
};

// Rules are invoked at every step: at a step both trials have, waiting for it and pinning them
// lists neither (smdebug refreshes on a miss); the other trial is refreshed when it lacks the
// step, and the invocation sees what that refresh found.
TEST(InvokeRuleLiveTest, RefreshesATrialOnlyWhenItLacksTheStep) {
  TempDir dir;
  LiveJob base_job(dir.path() / "base", 3);
  LiveJob other_job(dir.path() / "other", 3);
  const Trial base = Trial::open((dir.path() / "base").string());
  const Trial other = Trial::open((dir.path() / "other").string());
  ScriptedRule rule(base, {}, {other});
  const std::uint64_t base_before = base.refreshes();
  const std::uint64_t other_before = other.refreshes();
  for (const std::int64_t step : {0, 1, 2}) rule.invoke(step);
  EXPECT_EQ(base.refreshes(), base_before);
  EXPECT_EQ(other.refreshes(), other_before);

  base_job.write(3);
  other_job.write(3);
  rule.invoke(3);
  EXPECT_EQ(base.refreshes(), base_before + 1);
  EXPECT_EQ(other.refreshes(), other_before + 1);
  EXPECT_EQ(rule.others_last_step, (std::vector<std::int64_t>{2, 2, 2, 3}));
  EXPECT_EQ(rule.invoked, (std::vector<std::int64_t>{0, 1, 2, 3}));
}

}  // namespace
}  // namespace rulestream
