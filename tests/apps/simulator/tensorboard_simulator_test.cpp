// The simulated TensorBoard logdirs, replayed with the series rules: rules fire where a person
// looking at the curves would (a diverging run, a plateau, an overfitting run), at the steps the
// scenarios' definitions give (tensorboard_simulator.hpp), and stay quiet on a healthy run and
// on one restarted from a checkpoint.
#include "apps/simulator/tensorboard_simulator.hpp"

#include <gtest/gtest.h>

#include <set>

#include "engine/graph/series_pipeline.hpp"
#include "tests/support/recording_sink.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::RecordingSink;
using testing::TempDir;

struct Replayed {
  SeriesReport report;
  std::vector<RuleEvent> fired;
};

Replayed replay(const std::filesystem::path& logdir) {
  PipelineConfig config;
  config.paths = {logdir.string()};
  for (const char* name : {"NonFinite", "LossSpike", "GradNormSpike", "LossNotDecreasing",
                           "Overfit", "Overtraining"}) {
    RuleConfig rule;
    rule.rule = name;
    config.rules.push_back(rule);
  }
  auto sink = std::make_unique<RecordingSink>();
  auto* recorded = sink.get();
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::move(sink));
  SeriesPipeline pipeline(std::move(config), std::move(sinks));
  Replayed replayed;
  replayed.report = pipeline.run();
  for (const auto& event : recorded->events()) {
    if (event.kind == RuleEvent::Kind::ConditionMet) replayed.fired.push_back(event);
  }
  return replayed;
}

Replayed simulate_and_replay(const TempDir& dir, TensorBoardScenario scenario) {
  TensorBoardSimulatorOptions options;
  options.output = dir.path() / "logdir";
  options.scenario = scenario;
  options.steps = 1000;  // the fault at step 600, an exploding series' blow-up over 50 steps
  const TensorBoardSimulation simulation = simulate_tensorboard(options);
  EXPECT_EQ(simulation.fault_step, scenario == TensorBoardScenario::Healthy ? -1 : 600);
  return replay(options.output);
}

// The first step at which `rule` fired on `tag`, or -1.
std::int64_t first(const Replayed& replayed, const std::string& rule, const std::string& tag) {
  for (const auto& event : replayed.fired) {
    if (event.rule == rule && event.tensors.at(0) == tag) return event.global_step;
  }
  return -1;
}

std::set<std::string> rules_fired(const Replayed& replayed) {
  std::set<std::string> rules;
  for (const auto& event : replayed.fired) rules.insert(event.rule);
  return rules;
}

TEST(TensorBoardSimulatorTest, AHealthyRunIsQuiet) {
  TempDir dir;
  const Replayed replayed = simulate_and_replay(dir, TensorBoardScenario::Healthy);
  EXPECT_TRUE(replayed.fired.empty());
  // 1000 steps of train/loss, train/grad_norm, train/learning_rate; eval/loss every 10th.
  EXPECT_EQ(replayed.report.values, 3100);
  for (const auto& status : replayed.report.statuses) {
    EXPECT_EQ(status.status, RuleStatus::NoIssuesFound) << status.rule;
  }
}

TEST(TensorBoardSimulatorTest, ADivergingRunFiresSpikesThenNonFinite) {
  TempDir dir;
  const Replayed replayed = simulate_and_replay(dir, TensorBoardScenario::Exploding);
  // NaN from F + D + 1 = 651 on the loss and the gradient norm.
  EXPECT_EQ(first(replayed, "NonFinite", "train/loss"), 651);
  EXPECT_EQ(first(replayed, "NonFinite", "train/grad_norm"), 651);
  // The loss grows by (1e10 / loss at F)^(1/50), about 1.6x a step: twice its lagging level
  // within a few steps of F, well before the NaN.
  const auto spike = first(replayed, "LossSpike", "train/loss");
  EXPECT_GT(spike, 600);
  EXPECT_LT(spike, 610);
  EXPECT_GT(first(replayed, "GradNormSpike", "train/grad_norm"), 600);
  EXPECT_EQ(first(replayed, "LossNotDecreasing", "train/loss"), 610);
  EXPECT_EQ(first(replayed, "LossSpike", "eval/loss"), -1);
}

// Overtraining, by hand (c(x) = 2.3 e^(-k x), k = 0.005; delta 0.01; a training window is 5
// steps, a validation window 10 evaluations, 100 steps, closed at the first training value
// after its last evaluation). Healthy: a validation window's mean is 1.1 c (1 - e^(-0.5)) =
// 0.43 c below the one before, more than 0.01 while c > 0.023, i.e. up to step 920, so every
// validation window improves up to the last one (900-990, against 0.0145 below): quiet.
// On a plateau from F = 600, validation is 1.05 c(600) = 0.120: the window 600-690 improves on
// 500-590 (1.1 x 0.152 = 0.167), the window 700-790 does not, and closes at 791, where the
// training windows (flat since 600) have stalled too: the first firing is at 791.
constexpr std::int64_t kFirstOvertrained = 791;

TEST(TensorBoardSimulatorTest, APlateauFiresLossNotDecreasingAndOvertraining) {
  TempDir dir;
  const Replayed replayed = simulate_and_replay(dir, TensorBoardScenario::LossPlateau);
  EXPECT_EQ(rules_fired(replayed), (std::set<std::string>{"LossNotDecreasing", "Overtraining"}));
  EXPECT_EQ(first(replayed, "Overtraining", "train/loss"), kFirstOvertrained);
  // Compared every 10 steps: the first comparison inside the plateau is 610 against 600.
  EXPECT_EQ(first(replayed, "LossNotDecreasing", "train/loss"), 610);
  EXPECT_EQ(first(replayed, "LossNotDecreasing", "eval/loss"), 610);
}

TEST(TensorBoardSimulatorTest, AnOverfittingRunFiresOnTheValidationLossOnly) {
  TempDir dir;
  const Replayed replayed = simulate_and_replay(dir, TensorBoardScenario::Overfit);
  EXPECT_EQ(rules_fired(replayed),
            (std::set<std::string>{"LossNotDecreasing", "Overfit", "Overtraining"}));
  // Overfit, by hand (c(x) = 2.3 e^(-k x), k = 0.005; noise within +-0.7%): at an eval step t
  // the training window is steps t-9..t, mean about c(t) e^(4.5 k) = 1.0228 c(t). Before the
  // fault the validation loss is 1.1 c(t): ratio 1.1 / 1.0228 - 1 = 0.076, quiet. From 600 it
  // is 1.1 c(600) (1 + (t - 600) / 400): at 600 the ratio is again 0.076; at 610,
  // 1.1 x 1.025 x e^(0.05) / 1.0228 - 1 = 0.159 > 0.1: fires.
  EXPECT_EQ(first(replayed, "Overfit", "eval/loss"), 610);
  EXPECT_EQ(first(replayed, "LossNotDecreasing", "eval/loss"), 610);
  EXPECT_EQ(first(replayed, "LossNotDecreasing", "train/loss"), -1);
  // Overtraining: the validation windows' means are 1.1 c(600) (1 + (t - 600) / 400) averaged:
  // 600-690 at 0.140 improves on 0.167, 700-790 at 0.172 does not, closing at 791; training
  // has not improved on its best window by 0.01 since about step 757 (c = 0.052; the next
  // improvement needs c < 0.042, step 800): fires at 791.
  EXPECT_EQ(first(replayed, "Overtraining", "train/loss"), kFirstOvertrained);
}

TEST(TensorBoardSimulatorTest, ARunRestartedFromACheckpointReadsAsTheJobNowIsAndIsQuiet) {
  TempDir dir;
  const Replayed replayed = simulate_and_replay(dir, TensorBoardScenario::Restart);
  EXPECT_TRUE(replayed.fired.empty());
  EXPECT_EQ(replayed.report.restarts, 4);         // each of the four tags went back to step 300
  EXPECT_EQ(replayed.report.values, 3100 + 930);  // steps 300..599 written twice
}

TEST(TensorBoardSimulatorTest, OptionsOutOfRangeAreNamed) {
  TempDir dir;
  TensorBoardSimulatorOptions options;
  options.output = dir.path();
  options.scenario = TensorBoardScenario::Overfit;
  options.fault_step = 5000;
  EXPECT_THROW(simulate_tensorboard(options), std::invalid_argument);
  options.fault_step.reset();
  options.steps = 5;
  EXPECT_THROW(simulate_tensorboard(options), std::invalid_argument);
}

}  // namespace
}  // namespace rulestream
