// The built-in rules on simulated training jobs: each must fire exactly where its fault starts
// (apps/simulator/job_simulator.hpp documents each scenario's steps) and stay quiet on a
// healthy job.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>

#include "apps/simulator/job_simulator.hpp"
#include "rules/rule_registry.hpp"
#include "rules/sagemaker/loss_not_decreasing_rule.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::TempDir;
using Steps = std::vector<std::int64_t>;

JobSimulatorOptions job(const TempDir& dir, JobScenario scenario, std::int64_t steps,
                        std::optional<std::int64_t> fault_step = std::nullopt) {
  JobSimulatorOptions options;
  options.output = dir.path() / "job";
  options.scenario = scenario;
  options.steps = steps;
  options.tensor_size = 64;
  options.fault_step = fault_step;
  return options;
}

// The job is complete when opened: no grace period for late files.
Trial open_finished(const std::filesystem::path& path) {
  return Trial::open(path.string(), {.end_of_job_grace = std::chrono::milliseconds{0}});
}

Trial simulate(const JobSimulatorOptions& options) {
  JobSimulator(options).run();
  return open_finished(options.output);
}

std::unique_ptr<Rule> make(std::string_view rule, const Trial& trial,
                           const RuleParameters& parameters = {}) {
  return RuleRegistry::builtin().create(rule, {trial, {}}, parameters);
}

Steps fired(std::string_view rule, const Trial& trial, const RuleParameters& parameters = {}) {
  const auto built = make(rule, trial, parameters);
  return invoke_rule(*built).triggered_steps;
}

Steps range(std::int64_t begin, std::int64_t end, std::int64_t stride = 1) {
  Steps steps;
  for (std::int64_t step = begin; step < end; step += stride) steps.push_back(step);
  return steps;
}

// Global steps of the simulated job that satisfy `keep`.
Steps steps_where(const JobSimulator& simulator,
                  const std::function<bool(const SimulatedStep&)>& keep) {
  Steps steps;
  for (std::int64_t g = 0; g < simulator.global_step_count(); ++g) {
    if (keep(simulator.step(g))) steps.push_back(g);
  }
  return steps;
}

const char* const kBuiltins[] = {"VanishingGradient", "ExplodingTensor", "AllZero",
                                 "LossNotDecreasing"};

TEST(BuiltinRulesScenarioTest, HealthyJobKeepsEveryRuleQuiet) {
  TempDir dir;
  const Trial trial = simulate(job(dir, JobScenario::Healthy, 40));
  for (const char* rule : kBuiltins) {
    const auto built = make(rule, trial);
    const InvokeResult result = invoke_rule(*built);
    EXPECT_EQ(result.triggered_steps, Steps{}) << rule;
    EXPECT_EQ(result.steps_evaluated, 40) << rule;
  }
}

TEST(BuiltinRulesScenarioTest, HealthyJobWithEvalStepsKeepsEveryRuleQuiet) {
  TempDir dir;
  auto options = job(dir, JobScenario::Healthy, 40);
  options.eval_every = 10;
  options.eval_steps = 2;
  options.workers = 2;
  const Trial trial = simulate(options);
  const auto vanishing = make("VanishingGradient", trial);
  const InvokeResult result = invoke_rule(*vanishing);
  EXPECT_EQ(result.triggered_steps, Steps{});
  EXPECT_EQ(result.steps_evaluated, 40) << "EVAL steps have no gradients: skipped";
  EXPECT_EQ(fired("ExplodingTensor", trial), Steps{});
  EXPECT_EQ(fired("AllZero", trial), Steps{});
  EXPECT_EQ(fired("LossNotDecreasing", trial, {{"mode", "TRAIN"}}), Steps{});
  EXPECT_EQ(fired("LossNotDecreasing", trial, {{"mode", "EVAL"}, {"num_steps", "2"}}), Steps{});
}

TEST(BuiltinRulesScenarioTest, VanishingGradientFiresFromTheFaultStep) {
  TempDir dir;
  const Trial trial = simulate(job(dir, JobScenario::VanishingGradients, 40, 20));
  EXPECT_EQ(fired("VanishingGradient", trial), range(20, 40));
  EXPECT_EQ(fired("VanishingGradient", trial, {{"threshold", "1e-12"}}), Steps{});

  const auto rule = make("VanishingGradient", trial);
  EXPECT_NO_THROW(rule->invoke(19));
  EXPECT_THROW(rule->invoke(20), RuleEvaluationConditionMet);
  const Finding& finding = rule->last_finding();
  EXPECT_EQ(finding.tensors.size(), 6u) << "every gradient of the 3 layers vanished";
  ASSERT_EQ(finding.figures.size(), 7u);
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(finding.figures[i].name, "abs_mean");
    EXPECT_LT(finding.figures[i].value, 1e-7);
    EXPECT_EQ(finding.figures[i].tensor, finding.tensors[i]);
  }
  EXPECT_EQ(finding.figures[6], (Figure{"threshold", 1e-7, std::nullopt}));
  EXPECT_EQ(finding.message.rfind(finding.tensors[0] + " abs mean ", 0), 0u) << finding.message;
  EXPECT_NE(finding.message.find(" < threshold 1e-07 (and 5 more tensors)"), std::string::npos)
      << finding.message;
}

TEST(BuiltinRulesScenarioTest, VanishingGradientFiresAtSavedTrainStepsOfEveryWorkersJob) {
  TempDir dir;
  auto options = job(dir, JobScenario::VanishingGradients, 40, 23);
  options.eval_every = 10;
  options.eval_steps = 2;
  options.save_interval = 5;
  options.workers = 2;
  const JobSimulator simulator(options);
  simulator.run();
  const Trial trial = open_finished(options.output);
  const Steps expected = steps_where(simulator, [](const SimulatedStep& step) {
    return step.saved && step.mode == Mode::Train && step.global_step >= 23;
  });
  ASSERT_EQ(expected.front(), 24);  // 23 is an EVAL step; TRAIN step 20 is global step 24
  EXPECT_EQ(fired("VanishingGradient", trial), expected);
}

TEST(BuiltinRulesScenarioTest, ExplodingTensorFiresWhenValuesBecomeNonFinite) {
  TempDir dir;
  const Trial trial = simulate(job(dir, JobScenario::Exploding, 40, 20));
  // Step 20 is only large (x1e4); infinities come at 21, NaN everywhere from 22.
  EXPECT_EQ(fired("ExplodingTensor", trial), range(21, 40));
  EXPECT_EQ(fired("ExplodingTensor", trial, {{"only_nan", "True"}}), range(22, 40));
  EXPECT_EQ(fired("ExplodingTensor", trial, {{"tensor_regex", "^gradient/"}}), range(21, 40));
  EXPECT_EQ(fired("ExplodingTensor", trial, {{"collection_names", "losses"}}), range(21, 40));
  EXPECT_EQ(fired("ExplodingTensor", trial, {{"collection_names", "weights, biases"}}),
            range(22, 40));
  EXPECT_EQ(fired("ExplodingTensor", trial, {{"collection_names", "no_such_collection"}}), Steps{});

  const auto rule = make("ExplodingTensor", trial, {{"collection_names", "losses"}});
  EXPECT_THROW(rule->invoke(21), RuleEvaluationConditionMet);
  EXPECT_EQ(rule->last_finding().tensors, (std::vector<std::string>{"CrossEntropyLoss_output_0"}));
  EXPECT_EQ(rule->last_finding().figures,
            (std::vector<Figure>{{"nan_count", 0, "CrossEntropyLoss_output_0"},
                                 {"inf_count", 1, "CrossEntropyLoss_output_0"},
                                 {"size", 1, "CrossEntropyLoss_output_0"}}));
  EXPECT_EQ(rule->last_finding().message,
            "CrossEntropyLoss_output_0 has 0 NaN and 1 infinite of 1 values");
}

TEST(BuiltinRulesScenarioTest, AllZeroFiresOnADeadRelu) {
  TempDir dir;
  const Trial trial = simulate(job(dir, JobScenario::DeadRelu, 40, 20));
  EXPECT_EQ(fired("AllZero", trial, {{"tensor_regex", "relu.*_output"}}), range(20, 40));
  EXPECT_EQ(fired("AllZero", trial, {{"collection_names", "relu_activations"}}), range(20, 40));
  EXPECT_EQ(fired("AllZero", trial), range(20, 40));
  EXPECT_EQ(fired("AllZero", trial, {{"tensor_regex", "relu2"}}), Steps{});
  // About half of a healthy ReLU's outputs are zero: a low threshold fires at every step.
  EXPECT_EQ(fired("AllZero", trial, {{"tensor_regex", "relu2_output"}, {"threshold", "10"}}),
            range(0, 40));

  const auto rule = make("AllZero", trial, {{"tensor_regex", "relu.*_output"}});
  EXPECT_THROW(rule->invoke(20), RuleEvaluationConditionMet);
  EXPECT_EQ(rule->last_finding().tensors, (std::vector<std::string>{"relu1_output_0"}));
  EXPECT_EQ(rule->last_finding().figures,
            (std::vector<Figure>{{"zero_percent", 100.0, "relu1_output_0"},
                                 {"threshold", 100.0, std::nullopt}}));
  EXPECT_EQ(rule->last_finding().message, "relu1_output_0 is 100% zeros >= threshold 100%");
}

TEST(BuiltinRulesScenarioTest, LossNotDecreasingFiresOnceThePlateauSpansNumSteps) {
  TempDir dir;
  const Trial trial = simulate(job(dir, JobScenario::LossPlateau, 60, 30));
  // Comparisons every 10 steps: 40 is the first whose base (30) is on the plateau.
  EXPECT_EQ(fired("LossNotDecreasing", trial), (Steps{40, 50}));
  EXPECT_EQ(fired("LossNotDecreasing", trial, {{"num_steps", "5"}}), range(35, 60, 5));
  // Without the losses collection and without a selection, every scalar tensor is a loss
  // (seed 002): here only the loss is a scalar.
  EXPECT_EQ(fired("LossNotDecreasing", trial, {{"use_losses_collection", "False"}}),
            (Steps{40, 50}));
  EXPECT_EQ(fired("LossNotDecreasing", trial,
                  {{"use_losses_collection", "False"}, {"tensor_regex", "relu"}}),
            Steps{});
  EXPECT_EQ(fired("LossNotDecreasing", trial,
                  {{"use_losses_collection", "False"}, {"tensor_regex", "Loss_output"}}),
            (Steps{40, 50}));

  const auto built = make("LossNotDecreasing", trial);
  const auto& rule = dynamic_cast<const LossNotDecreasingRule&>(*built);
  invoke_rule(*built);
  ASSERT_EQ(rule.comparisons().size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    const auto& comparison = rule.comparisons()[i];
    EXPECT_EQ(comparison.tensor, "CrossEntropyLoss_output_0");
    EXPECT_EQ(comparison.step, static_cast<std::int64_t>(10 * (i + 1)));
    EXPECT_EQ(comparison.base_step, static_cast<std::int64_t>(10 * i));
    EXPECT_EQ(comparison.triggered, i >= 3);
  }
  EXPECT_EQ(rule.comparisons()[3].loss, rule.comparisons()[3].base_loss);

  // A fresh rule compares at once; then not again before num_steps have passed.
  const auto fresh = make("LossNotDecreasing", trial);
  EXPECT_THROW(fresh->invoke(50), RuleEvaluationConditionMet);
  const Finding finding = fresh->last_finding();
  EXPECT_NO_THROW(fresh->invoke(55));
  EXPECT_NO_THROW(built->invoke(50)) << "compared at 50 already: the next comparison is at 60";
  EXPECT_EQ(finding.tensors, (std::vector<std::string>{"CrossEntropyLoss_output_0"}));
  EXPECT_EQ(finding.figures.at(1).name, "base_loss");
  EXPECT_EQ(finding.figures.at(2), (Figure{"base_step", 40, "CrossEntropyLoss_output_0"}));
  EXPECT_NE(finding.message.find(" at step 50 vs "), std::string::npos) << finding.message;
  EXPECT_NE(finding.message.find("changed by 0%, not decreasing by 0.1%"), std::string::npos)
      << finding.message;
}

TEST(BuiltinRulesScenarioTest, LossNotDecreasingComparesTheConfiguredModesSteps) {
  TempDir dir;
  // Blocks of 10 TRAIN + 2 EVAL steps: TRAIN step m is global step (m / 10) * 12 + m % 10.
  auto options = job(dir, JobScenario::LossPlateau, 60, 36);  // TRAIN step 30
  options.eval_every = 10;
  options.eval_steps = 2;
  const JobSimulator simulator(options);
  simulator.run();
  const Trial trial = open_finished(options.output);
  const Steps expected = steps_where(simulator, [](const SimulatedStep& step) {
    return step.mode == Mode::Train && (step.mode_step == 40 || step.mode_step == 50);
  });
  ASSERT_EQ(expected, (Steps{48, 60}));

  const auto built = make("LossNotDecreasing", trial, {{"mode", "TRAIN"}});
  EXPECT_EQ(invoke_rule(*built).triggered_steps, expected);
  const auto& rule = dynamic_cast<const LossNotDecreasingRule&>(*built);
  ASSERT_EQ(rule.comparisons().size(), 5u);
  const auto& fourth = rule.comparisons()[3];
  EXPECT_EQ(fourth.step, 48);
  EXPECT_EQ(fourth.mode_step, 40);
  EXPECT_EQ(fourth.base_step, 36);
  EXPECT_EQ(fourth.base_mode_step, 30);
  EXPECT_TRUE(fourth.triggered);
}

}  // namespace
}  // namespace rulestream
