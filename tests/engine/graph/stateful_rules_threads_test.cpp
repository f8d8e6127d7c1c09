// The rules that keep state from step to step (WeightUpdateRatio, UnchangedTensor,
// PoorWeightInitialization) run on one serial node each, but spread their per-tensor work within
// a step over the arena's threads (Rule::for_ranges_in_parallel) and keep their state in name
// order. Their events and statuses must be those of one thread, on jobs with enough tensors that
// the work is split (hundreds of weights: several reads of weights, several tasks of norms,
// screens and spreads), healthy and with the faults that make each rule fire.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "apps/simulator/job_simulator.hpp"
#include "core/model/busy_timer.hpp"
#include "engine/graph/rule_pipeline.hpp"
#include "rules/rule_registry.hpp"
#include "tests/support/recording_sink.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using rulestream::testing::RecordingSink;
using rulestream::testing::TempDir;
using Steps = std::vector<std::int64_t>;

constexpr std::int64_t kSteps = 12;
constexpr std::int64_t kFaultStep = 6;
const std::vector<std::string> kRules = {"WeightUpdateRatio", "UnchangedTensor",
                                         "PoorWeightInitialization"};

// 2 fc layers and 700 extra tensors (350 weights, 350 weight gradients) of 512 floats: 352
// weights read 64 at a time, norms over 180,224 values a step (several tasks of them), screens
// of 700-odd tensors 128 a task, spreads of 352 gradients.
std::filesystem::path write_job(const TempDir& dir, JobScenario scenario, std::int64_t fault_step) {
  JobSimulatorOptions options;
  options.output = dir.path() / "job";
  options.scenario = scenario;
  options.fault_step = fault_step;
  options.steps = kSteps;
  options.save_interval = 1;
  options.layers = 2;
  options.tensor_size = 16;
  options.extra_tensors = 700;
  options.extra_tensor_size = 512;
  JobSimulator(options).run();
  return options.output;
}

// Every event of every rule, in the order each rule's reached the sink.
std::vector<RuleEvent> replay(const std::filesystem::path& trial, int threads) {
  PipelineConfig config;
  config.paths = {trial.string()};
  for (const std::string& rule : kRules) config.rules.push_back({rule, rule, {}});
  config.threads = threads;
  auto sink = std::make_unique<RecordingSink>();
  const RecordingSink* recording = sink.get();
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::move(sink));
  RulePipeline pipeline(config, std::move(sinks));
  pipeline.run();
  return recording->events();
}

std::vector<RuleEvent> events_of(const std::vector<RuleEvent>& events, const std::string& rule) {
  std::vector<RuleEvent> of_rule;
  for (const RuleEvent& event : events) {
    if (event.rule_configuration == rule) of_rule.push_back(event);
  }
  return of_rule;
}

Steps fired_steps(const std::vector<RuleEvent>& events) {
  Steps steps;
  for (const RuleEvent& event : events) {
    if (event.kind == RuleEvent::Kind::ConditionMet) steps.push_back(event.global_step);
  }
  return steps;
}

// The same bits: a figure may be NaN, which == never matches.
bool same_value(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

void expect_same_events(const std::vector<RuleEvent>& one_thread,
                        const std::vector<RuleEvent>& threads, const std::string& what) {
  ASSERT_EQ(threads.size(), one_thread.size()) << what;
  for (std::size_t i = 0; i < one_thread.size(); ++i) {
    const RuleEvent& expected = one_thread[i];
    const RuleEvent& got = threads[i];
    EXPECT_EQ(got.kind, expected.kind) << what << " event " << i;
    EXPECT_EQ(got.global_step, expected.global_step) << what << " event " << i;
    EXPECT_EQ(got.tensors, expected.tensors) << what << " event " << i;
    EXPECT_EQ(got.message, expected.message) << what << " event " << i;
    EXPECT_EQ(got.status, expected.status) << what << " event " << i;
    EXPECT_EQ(got.steps_evaluated, expected.steps_evaluated) << what << " event " << i;
    EXPECT_EQ(got.times_fired, expected.times_fired) << what << " event " << i;
    ASSERT_EQ(got.figures.size(), expected.figures.size()) << what << " event " << i;
    for (std::size_t f = 0; f < expected.figures.size(); ++f) {
      EXPECT_EQ(got.figures[f].name, expected.figures[f].name) << what << " event " << i;
      EXPECT_EQ(got.figures[f].tensor, expected.figures[f].tensor) << what << " event " << i;
      EXPECT_TRUE(same_value(got.figures[f].value, expected.figures[f].value))
          << what << " event " << i << " figure " << expected.figures[f].name << ": "
          << got.figures[f].value << " against " << expected.figures[f].value;
    }
  }
}

struct Case {
  JobScenario scenario;
  std::int64_t fault_step;
  // Derived from the scenario's definition (job_simulator.hpp), every step a TRAIN step:
  Steps weight_update_ratio;  // an update of exactly 0 is below small_threshold 1e-8
  Steps unchanged_tensor;     // three identical saves in a row (num_steps 3)
  Steps poor_initialization;  // TRAIN steps 0-9 only; a gradient spread below 0.001
};

const Case kCases[] = {
    // Weights move by 0.1% a step (ratio ~1e-3), gradients span ~0.04 from 5th to 95th
    // percentile, activation variances alike, the loss falls: nothing fires.
    {JobScenario::Healthy, kFaultStep, {}, {}, {}},
    // From step 6 the weights are those of step 5 and every gradient is 0: a zero update at 6
    // onwards; steps 5, 6, 7 alike from 7 on; zero-width gradients at 6 to 9.
    {JobScenario::FrozenWeights, kFaultStep, {6, 7, 8, 9, 10, 11}, {7, 8, 9, 10, 11}, {6, 7, 8, 9}},
    // Gradients of ~1e-10 from step 0: spreads far below 0.001 at every step up to TRAIN step 9,
    // and any two saves of a gradient differ by far less than atol 1e-8, so numpy.allclose calls
    // three saves in a row close from step 2 on.
    {JobScenario::VanishingGradients,
     0,
     {},
     {2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
     {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
    // Gradients x1e4 at 6, infinite at 7, NaN from 8, weights NaN from 8: not compared (NaN
    // ratios, NaN values), but read by every rule; compared with one thread only.
    {JobScenario::Exploding, kFaultStep, {}, {}, {}},
};

TEST(StatefulRulesAcrossThreads, EveryThreadCountGivesTheOneThreadEventsAndStatuses) {
  for (const Case& test : kCases) {
    const std::string scenario(job_scenario_name(test.scenario));
    TempDir dir;
    const auto trial = write_job(dir, test.scenario, test.fault_step);
    const std::vector<RuleEvent> one_thread = replay(trial, 1);
    if (test.scenario != JobScenario::Exploding) {
      EXPECT_EQ(fired_steps(events_of(one_thread, "WeightUpdateRatio")), test.weight_update_ratio)
          << scenario;
      EXPECT_EQ(fired_steps(events_of(one_thread, "UnchangedTensor")), test.unchanged_tensor)
          << scenario;
      EXPECT_EQ(fired_steps(events_of(one_thread, "PoorWeightInitialization")),
                test.poor_initialization)
          << scenario;
    }
    // Two threads at least (CI's machines have two; the pipeline takes no more than the
    // machine has), four where there are.
    const std::vector<RuleEvent> four_threads = replay(trial, 4);
    for (const std::string& rule : kRules) {
      const auto expected = events_of(one_thread, rule);
      ASSERT_FALSE(expected.empty()) << scenario << " " << rule;
      EXPECT_EQ(expected.back().kind, RuleEvent::Kind::Status) << scenario << " " << rule;
      expect_same_events(expected, events_of(four_threads, rule), scenario + " " + rule);
    }
  }
}

// A fired WeightUpdateRatio names the first weights in name order, at most ten of them, as one
// thread judging them in order does, though their norms were summed by several threads.
TEST(StatefulRulesAcrossThreads, AFindingNamesTheFirstTensorsInNameOrder) {
  TempDir dir;
  const auto trial = write_job(dir, JobScenario::FrozenWeights, kFaultStep);
  const auto events = events_of(replay(trial, 4), "WeightUpdateRatio");
  ASSERT_FALSE(events.empty());
  const RuleEvent& first = events.front();
  ASSERT_EQ(first.kind, RuleEvent::Kind::ConditionMet);
  // The weights collection's names, sorted: MLP_fc1.weight, MLP_fc2.weight, then
  // MLP_layer<i>.weight ordered as strings (layer0, layer1, layer10, layer100, ...).
  const std::vector<std::string> expected = {
      "MLP_fc1.weight",      "MLP_fc2.weight",      "MLP_layer0.weight",   "MLP_layer1.weight",
      "MLP_layer10.weight",  "MLP_layer100.weight", "MLP_layer101.weight", "MLP_layer102.weight",
      "MLP_layer103.weight", "MLP_layer104.weight"};
  EXPECT_EQ(first.tensors, expected);
  EXPECT_EQ(first.message.rfind("MLP_fc1.weight update ratio 0 ", 0), 0u) << first.message;
}

// A rule whose every step is a millisecond of CPU in each of two ranges of a parallel section and
// nothing else: its serial node's busy time must leave those out (they are not serial work),
// though with one thread the node's own thread ran them all.
class ParallelOnlyRule final : public Rule {
 public:
  using Rule::Rule;
  std::string_view name() const override { return "ParallelOnly"; }
  bool invoke_at_step(std::int64_t) override {
    for_ranges_in_parallel(2, 1, [](std::size_t, std::size_t) {
      const auto start = BusyTimer::now();
      while (BusyTimer::now() - start < std::chrono::milliseconds(1)) {
      }
    });
    return false;
  }
};

TEST(StatefulRulesAcrossThreads, ARuleSerialNodeIsNotChargedForItsParallelSections) {
  TempDir dir;
  JobSimulatorOptions options;
  options.output = dir.path() / "job";
  options.steps = kSteps;
  options.tensor_size = 16;
  JobSimulator(options).run();
  RuleRegistry registry = RuleRegistry::builtin();
  registry.add(
      {.name = "ParallelOnly", .create = [](const RuleContext& context, const RuleParameters&) {
         return std::unique_ptr<Rule>(new ParallelOnlyRule(context.base_trial));
       }});
  PipelineConfig config;
  config.paths = {options.output.string()};
  config.rules = {{"parallel", "ParallelOnly", {}}};
  config.threads = 1;
  RulePipeline pipeline(config, {}, registry);
  const PipelineReport report = pipeline.run();
  ASSERT_EQ(report.rule_busy.size(), 1u);
  ASSERT_EQ(report.rule_serial_busy.size(), 1u);
  // 12 steps of 2 ms, all on the rule's own thread (one thread): the rule's busy time.
  EXPECT_GE(report.rule_busy[0], kSteps * std::chrono::milliseconds(2));
  // The node's own work is handing the step over: far less than a millisecond a step.
  EXPECT_LT(report.rule_serial_busy[0], report.rule_busy[0] / 4);
  EXPECT_GE(report.rule_serial_busy[0].count(), 0);
}

}  // namespace
}  // namespace rulestream
