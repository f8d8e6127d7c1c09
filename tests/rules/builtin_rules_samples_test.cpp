// Every built-in rule, with its default parameters, replayed over every real smdebug trial in
// smdebug-samples: the exact steps where each fires (or "quiet") and how many steps it
// evaluated. A change in any rule's semantics shows up here as a precise diff; docs/rules.md
// ("On the smdebug samples") explains each rule that fires.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "rules/rule_registry.hpp"
#include "tests/support/reference_counts.hpp"
#include "tests/support/reference_reductions.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/smdebug_expected.hpp"
#include "tests/support/test_support.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream {
namespace {

using Steps = std::vector<std::int64_t>;

constexpr const char* kNoSamples =
    "smdebug-samples not found (set RULESTREAM_SAMPLES or place them in "
    "../shared/smdebug-samples): built-in rule outcomes not checked";

// TensorVariance has no default threshold (docs/rules.md: at least one must be set). 10^4 is a
// spread no healthy weight, gradient or activation has (a standard deviation of 100) and every
// diverged one exceeds.
const RuleParameters kTensorVarianceParameters = {{"max_threshold", "10000"}};

// What a rule did over one sample trial: the fired global steps written compactly ("quiet",
// "3-31", "6, 9, 12") and the number of steps it evaluated (met or not).
struct Outcome {
  std::string fired;
  std::int64_t evaluated = 0;
  friend bool operator==(const Outcome&, const Outcome&) = default;
};

void PrintTo(const Outcome& outcome, std::ostream* out) {
  *out << "{\"" << outcome.fired << "\", " << outcome.evaluated << "}";
}

std::string compact(const Steps& steps) {
  if (steps.empty()) return "quiet";
  std::string text;
  for (std::size_t i = 0; i < steps.size();) {
    std::size_t last = i;
    while (last + 1 < steps.size() && steps[last + 1] == steps[last] + 1) ++last;
    if (!text.empty()) text += ", ";
    text += std::to_string(steps[i]);
    if (last > i) text += "-" + std::to_string(steps[last]);
    i = last + 1;
  }
  return text;
}

// Which steps a rule evaluates on a sample, each counted from the data (evaluated_steps):
// every step of the trial; the steps that saved a tensor of the `gradients` collection
// (VanishingGradient skips the others, as smdebug does; in a job that saved no gradient at all,
// every step, where its loop finds nothing to skip for: the pipeline's status then says it
// read nothing, see rule_runner.cpp); or none (ClassImbalance, Confusion
// and TreeDepth read XGBoost's labels, predictions and trees, which no sample has). Rules that
// read tensors a sample lacks still evaluate every step, and stay quiet. StepOutlier judges the
// steps it has a duration for after its warm-up (step_outlier_judged, below);
// MaxInitializationTime judges none in a replay (smdebug's files do not say when the job began).
enum Evaluates { kEveryStep, kGradientSteps, kNoStep, kTimedSteps };

struct Expected {
  std::string fired;
  Evaluates evaluates = kEveryStep;
};

// The expected outcome of every (sample, rule). Rules whose names are absent for a sample
// make the test fail: a new built-in needs its row. The firing steps of the rows that fire are
// derived from the data by the tests below the table, or, for the rest, explained in
// docs/rules.md ("On the smdebug samples").
using Expectations = std::map<std::string, std::map<std::string, Expected>>;

const Expectations& expectations() {
  static const Expectations table = {
      {"pt-mlp-basic",  // healthy: quiet but for the two documented exceptions
       {{"AllZero", {"quiet", kEveryStep}},
        {"CheckInputImages", {"quiet", kEveryStep}},
        {"ClassImbalance", {"quiet", kNoStep}},
        {"Confusion", {"quiet", kNoStep}},
        {"DeadRelu", {"quiet", kEveryStep}},
        {"ExplodingTensor", {"quiet", kEveryStep}},
        {"FeatureImportanceOverweight", {"quiet", kEveryStep}},
        // Single per-batch losses 10 steps apart (TRAIN and EVAL mixed in mode GLOBAL) rise at
        // 9 of 20 checks; smdebug's reading of the rule fires at the same steps.
        {"LossNotDecreasing", {"50, 70, 90, 110, 130, 150, 160, 170, 180", kEveryStep}},
        {"NLPSequenceRatio", {"quiet", kEveryStep}},
        // The 2nd and 4th evaluation passes: validation mean 0.69-0.75 vs training 0.489,
        // then 0.45-0.58 vs 0.380: more than 10% above.
        {"Overfit", {"90-99, 190-199", kEveryStep}},
        {"Overtraining", {"quiet", kEveryStep}},
        {"PoorWeightInitialization", {"quiet", kEveryStep}},
        {"SaturatedActivation", {"quiet", kEveryStep}},
        {"SimilarAcrossRuns", {"quiet", kEveryStep}},
        {"TensorVariance", {"quiet", kEveryStep}},
        {"StalledTrainingRule", {"quiet", kEveryStep}},
        {"StepOutlier", {"quiet", kTimedSteps}},
        {"MaxInitializationTime", {"quiet", kNoStep}},
        {"TreeDepth", {"quiet", kNoStep}},
        {"UnchangedTensor", {"quiet", kEveryStep}},
        {"VanishingGradient", {"quiet", kGradientSteps}},
        {"WeightUpdateRatio", {"quiet", kEveryStep}}}},
      {"pt-mlp-reductions",  // the same job saving reductions: the same two rules fire
       {{"AllZero", {"quiet", kEveryStep}},
        {"CheckInputImages", {"quiet", kEveryStep}},
        {"ClassImbalance", {"quiet", kNoStep}},
        {"Confusion", {"quiet", kNoStep}},
        {"DeadRelu", {"quiet", kEveryStep}},
        {"ExplodingTensor", {"quiet", kEveryStep}},
        {"FeatureImportanceOverweight", {"quiet", kEveryStep}},
        {"LossNotDecreasing", {"48, 70, 92", kEveryStep}},
        {"NLPSequenceRatio", {"quiet", kEveryStep}},
        {"Overfit", {"92, 96", kEveryStep}},
        {"Overtraining", {"quiet", kEveryStep}},
        {"PoorWeightInitialization", {"quiet", kEveryStep}},
        {"SaturatedActivation", {"quiet", kEveryStep}},
        {"SimilarAcrossRuns", {"quiet", kEveryStep}},
        {"TensorVariance", {"quiet", kEveryStep}},
        {"StalledTrainingRule", {"quiet", kEveryStep}},
        {"StepOutlier", {"quiet", kTimedSteps}},
        {"MaxInitializationTime", {"quiet", kNoStep}},
        {"TreeDepth", {"quiet", kNoStep}},
        {"UnchangedTensor", {"quiet", kEveryStep}},
        {"VanishingGradient", {"quiet", kGradientSteps}},
        {"WeightUpdateRatio", {"quiet", kEveryStep}}}},
      {"pt-ddp-2workers",  // healthy, two workers
       {{"AllZero", {"quiet", kEveryStep}},
        {"CheckInputImages", {"quiet", kEveryStep}},
        {"ClassImbalance", {"quiet", kNoStep}},
        {"Confusion", {"quiet", kNoStep}},
        {"DeadRelu", {"quiet", kEveryStep}},
        {"ExplodingTensor", {"quiet", kEveryStep}},
        {"FeatureImportanceOverweight", {"quiet", kEveryStep}},
        {"LossNotDecreasing", {"12, 68, 78, 100", kEveryStep}},
        {"NLPSequenceRatio", {"quiet", kEveryStep}},
        {"Overfit", {"quiet", kEveryStep}},
        {"Overtraining", {"quiet", kEveryStep}},
        {"PoorWeightInitialization", {"quiet", kEveryStep}},
        {"SaturatedActivation", {"quiet", kEveryStep}},
        {"SimilarAcrossRuns", {"quiet", kEveryStep}},
        {"TensorVariance", {"quiet", kEveryStep}},
        {"StalledTrainingRule", {"quiet", kEveryStep}},
        {"StepOutlier", {"quiet", kTimedSteps}},
        {"MaxInitializationTime", {"quiet", kNoStep}},
        {"TreeDepth", {"quiet", kNoStep}},
        {"UnchangedTensor", {"quiet", kEveryStep}},
        {"VanishingGradient", {"quiet", kGradientSteps}},
        {"WeightUpdateRatio", {"quiet", kEveryStep}}}},
      {"pt-dtypes",  // synthetic tensors of every dtype, saved unchanged; NaN/Inf at step 10
       {{"AllZero", {"0, 2, 4, 6, 8, 10, 12, 14, 16", kEveryStep}},  // dt_allzero
        {"CheckInputImages", {"quiet", kEveryStep}},
        {"ClassImbalance", {"quiet", kNoStep}},
        {"Confusion", {"quiet", kNoStep}},
        {"DeadRelu", {"quiet", kEveryStep}},
        {"ExplodingTensor", {"10", kEveryStep}},  // dt_float32_naninf
        {"FeatureImportanceOverweight", {"quiet", kEveryStep}},
        {"LossNotDecreasing", {"quiet", kEveryStep}},
        {"NLPSequenceRatio", {"quiet", kEveryStep}},
        {"Overfit", {"quiet", kEveryStep}},
        {"Overtraining", {"quiet", kEveryStep}},
        {"PoorWeightInitialization", {"quiet", kEveryStep}},
        {"SaturatedActivation", {"quiet", kEveryStep}},
        {"SimilarAcrossRuns", {"quiet", kEveryStep}},  // NaN equals NaN across runs
        {"TensorVariance", {"0, 2, 4, 6, 8, 10, 12, 14, 16", kEveryStep}},  // dt_int32, dt_int64
        {"StalledTrainingRule", {"quiet", kEveryStep}},
        {"StepOutlier", {"quiet", kTimedSteps}},
        {"MaxInitializationTime", {"quiet", kNoStep}},
        {"TreeDepth", {"quiet", kNoStep}},
        {"UnchangedTensor",
         {"4, 6, 8", kEveryStep}},  // dt_allzero, dt_float32_naninf before step 10
        {"VanishingGradient", {"quiet", kGradientSteps}},
        {"WeightUpdateRatio", {"quiet", kEveryStep}}}},
      {"pt-exploding",  // loss 1.2e3, 3.7e7, 4e24, Inf at step 3, NaN from step 4
       {{"AllZero", {"quiet", kEveryStep}},
        {"CheckInputImages", {"quiet", kEveryStep}},
        {"ClassImbalance", {"quiet", kNoStep}},
        {"Confusion", {"quiet", kNoStep}},
        {"DeadRelu", {"quiet", kEveryStep}},
        {"ExplodingTensor", {"3-31", kEveryStep}},
        {"FeatureImportanceOverweight", {"quiet", kEveryStep}},
        {"LossNotDecreasing", {"quiet", kEveryStep}},  // NaN compares as neither rising nor falling
        {"NLPSequenceRatio", {"quiet", kEveryStep}},
        {"Overfit", {"quiet", kEveryStep}},
        {"Overtraining", {"quiet", kEveryStep}},  // windows of NaN losses are not judged
        {"PoorWeightInitialization", {"quiet", kEveryStep}},
        {"SaturatedActivation", {"quiet", kEveryStep}},
        {"SimilarAcrossRuns", {"quiet", kEveryStep}},  // NaN equals NaN across runs
        {"TensorVariance", {"1-3", kEveryStep}},  // then NaN variances, which compare with nothing
        {"StalledTrainingRule", {"quiet", kEveryStep}},
        {"StepOutlier", {"quiet", kTimedSteps}},
        {"MaxInitializationTime", {"quiet", kNoStep}},
        {"TreeDepth", {"quiet", kNoStep}},
        {"UnchangedTensor", {"quiet", kEveryStep}},
        {"VanishingGradient", {"quiet", kGradientSteps}},
        {"WeightUpdateRatio", {"1-4", kEveryStep}}}},
      {"pt-lr0-plateau",  // learning rate 0: loss bit-identical, weights never change
       {{"AllZero", {"quiet", kEveryStep}},
        {"CheckInputImages", {"quiet", kEveryStep}},
        {"ClassImbalance", {"quiet", kNoStep}},
        {"Confusion", {"quiet", kNoStep}},
        {"DeadRelu", {"quiet", kEveryStep}},
        {"ExplodingTensor", {"quiet", kEveryStep}},
        {"FeatureImportanceOverweight", {"quiet", kEveryStep}},
        {"LossNotDecreasing", {"10, 20, 30, 40, 50", kEveryStep}},
        {"NLPSequenceRatio", {"quiet", kEveryStep}},
        {"Overfit", {"quiet", kEveryStep}},
        {"Overtraining", {"9-59", kEveryStep}},
        {"PoorWeightInitialization", {"5-9", kEveryStep}},
        {"SaturatedActivation", {"quiet", kEveryStep}},
        {"SimilarAcrossRuns", {"quiet", kEveryStep}},
        {"TensorVariance", {"quiet", kEveryStep}},
        {"StalledTrainingRule", {"quiet", kEveryStep}},
        {"StepOutlier", {"quiet", kTimedSteps}},
        {"MaxInitializationTime", {"quiet", kNoStep}},
        {"TreeDepth", {"quiet", kNoStep}},
        {"UnchangedTensor", {"2-59", kEveryStep}},
        {"VanishingGradient", {"quiet", kGradientSteps}},
        {"WeightUpdateRatio",
         {"3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39, 42, 45, 48, 51, 54, 57",
          kEveryStep}}}}};
  return table;
}

// Runs `rule` over `trial` with the parameters the table assumes: defaults, a threshold for
// TensorVariance, and for SimilarAcrossRuns the same trial opened a second time as the other
// run (two identical runs must not differ).
Outcome replay(const std::string& rule, const testing::SampleTrial& sample, const Trial& trial) {
  RuleParameters parameters;
  std::vector<Trial> others;
  if (rule == "TensorVariance") parameters = kTensorVarianceParameters;
  if (rule == "SimilarAcrossRuns") others.push_back(Trial::open(sample.trial_dir.string()));
  const auto built = RuleRegistry::builtin().create(rule, {trial, others}, parameters);
  const InvokeResult result = invoke_rule(*built);
  return {compact(result.triggered_steps), result.steps_evaluated};
}

class BuiltinRulesSamplesTest : public ::testing::TestWithParam<testing::SampleTrial> {
 protected:
  void SetUp() override {
    if (GetParam().name.empty()) GTEST_SKIP() << kNoSamples;
  }
};

// How many steps saved a tensor of `collection`.
std::int64_t steps_saving(const Trial& trial, const std::string& collection) {
  std::int64_t saving = 0;
  for (const std::int64_t step : trial.steps()) {
    if (!trial.tensor_names({.step = step, .collection = collection}).empty()) ++saving;
  }
  return saving;
}

// NonFinite's outcome read straight off the data: the first non-finite value of each scalar of
// the `losses` and `scalars` collections in each mode fires; every step that saved one of them
// is evaluated.
Outcome non_finite_from_data(const Trial& trial) {
  std::set<std::string> names;
  for (const char* collection : {"losses", "scalars"}) {
    if (!trial.collections().contains(collection)) continue;
    for (const auto& name : trial.tensor_names({.collection = collection})) names.insert(name);
  }
  std::set<std::pair<std::string, Mode>> seen;
  Steps fired;
  std::int64_t evaluated = 0;
  for (const std::int64_t step : trial.steps()) {
    bool saved = false;
    bool fire = false;
    for (const auto& name : names) {
      TensorValue value;
      try {
        value = trial.tensor(name).value(step);
      } catch (const TensorUnavailableForStep&) {
        continue;
      }
      if (value.is_string() || value.size() != 1 || !is_real_numeric(value.dtype())) continue;
      saved = true;
      if (!std::isfinite(value.as_double(0)) &&
          seen.emplace(name, trial.mode(step).value_or(Mode::Global)).second) {
        fire = true;
      }
    }
    evaluated += saved ? 1 : 0;
    if (fire) fired.push_back(step);
  }
  return {compact(fired), evaluated};
}

// The steps StepOutlier judges, read off the data: a duration is measured between consecutive
// steps of one mode (the samples' arrival times increase with the step), and the first ten
// durations of each mode only make its level.
std::int64_t step_outlier_judged(const Trial& trial) {
  std::map<Mode, std::int64_t> durations;
  std::optional<Mode> previous;
  std::int64_t judged = 0;
  for (const std::int64_t step : trial.steps()) {
    const Mode mode = trial.mode(step).value_or(Mode::Global);
    if (previous == mode && ++durations[mode] > 10) ++judged;
    previous = mode;
  }
  return judged;
}

// rulestream's own series rules are not in the table: NonFinite's row is read off the data
// (above); the others are checked on jobs and series whose values give their firing steps by
// hand (series_rule_on_trial_test.cpp, series_rules_test.cpp, judgement_rules_test.cpp) and on
// labelled real runs (benchmarks/alert_quality.py).
const std::set<std::string> kOwnSeriesRules = {
    "NonFinite",         "LossSpike",         "GradNormSpike",    "Divergence",
    "GradientExplosion", "GradientVanishing", "OverfittingTrend", "Plateau"};

TEST_P(BuiltinRulesSamplesTest, EveryBuiltinRuleFiresExactlyWhereExpected) {
  const testing::SampleTrial& sample = GetParam();
  // A sample without rows fails for every rule, each message saying what the rule did.
  static const std::map<std::string, Expected> kNoRows;
  const auto found = expectations().find(sample.name);
  const auto& rows = found == expectations().end() ? kNoRows : found->second;
  const Trial trial = Trial::open(sample.trial_dir.string());
  const std::int64_t every_step = static_cast<std::int64_t>(trial.steps().size());
  const std::int64_t saving_gradients = steps_saving(trial, "gradients");
  const std::int64_t gradient_steps = saving_gradients > 0 ? saving_gradients : every_step;

  std::set<std::string> covered;
  for (const RuleSpec* spec : RuleRegistry::builtin().all()) {
    SCOPED_TRACE(sample.name + ": " + spec->name);
    covered.insert(spec->name);
    if (spec->name == "NonFinite") {
      EXPECT_EQ(replay(spec->name, sample, trial), non_finite_from_data(trial));
      continue;
    }
    if (kOwnSeriesRules.contains(spec->name)) continue;
    const auto expected = rows.find(spec->name);
    const Outcome actual = replay(spec->name, sample, trial);
    if (expected == rows.end()) {
      ADD_FAILURE() << "no expected outcome for rule " << spec->name << " on " << sample.name
                    << "; it did {\"" << actual.fired << "\", " << actual.evaluated << "}";
      continue;
    }
    const Expected& row = expected->second;
    const std::int64_t evaluated = row.evaluates == kEveryStep       ? every_step
                                   : row.evaluates == kGradientSteps ? gradient_steps
                                   : row.evaluates == kTimedSteps    ? step_outlier_judged(trial)
                                                                     : 0;
    EXPECT_EQ(actual, (Outcome{row.fired, evaluated}));
  }
  for (const auto& [rule, outcome] : rows) {
    EXPECT_TRUE(covered.count(rule)) << "the table names " << rule << ", not a built-in rule";
  }
}

INSTANTIATE_TEST_SUITE_P(Samples, BuiltinRulesSamplesTest,
                         ::testing::ValuesIn(testing::sample_trials_or_placeholder()),
                         [](const ::testing::TestParamInfo<testing::SampleTrial>& param_info) {
                           return testing::sample_test_name(param_info.param);
                         });

// --- the outcomes issue 4 names, derived from the data -----------------------------------------

std::optional<Trial> open_sample(const std::string& name) {
  const auto samples = testing::samples_dir();
  if (!samples) return std::nullopt;
  return Trial::open((*samples / "trials" / name).string());
}

TEST(BuiltinRulesOnSamplesTest, ExplodingTensorFiresFromTheStepWhereTheLossFirstBecomesInfinite) {
  const auto trial = open_sample("pt-exploding");
  if (!trial) GTEST_SKIP() << kNoSamples;
  const Tensor loss = trial->tensor("MSELoss_output_0");
  std::optional<std::int64_t> first_infinite;
  for (const std::int64_t step : loss.steps()) {
    const auto non_finite = testing::count_non_finite(loss.value(step));
    ASSERT_TRUE(non_finite) << "the loss is a float tensor";
    if (non_finite->inf > 0) {
      first_infinite = step;
      break;
    }
    ASSERT_EQ(non_finite->nan, 0) << "NaN at step " << step << " before any infinity";
  }
  ASSERT_EQ(first_infinite, 3);

  // From there to the job's last step: everything after it is NaN.
  const Steps all = trial->steps();
  const Steps from_first_infinite(std::find(all.begin(), all.end(), *first_infinite), all.end());
  EXPECT_EQ(testing::fired_steps("ExplodingTensor", *trial), from_first_infinite);
  EXPECT_EQ(compact(from_first_infinite), "3-31");
}

TEST(BuiltinRulesOnSamplesTest,
     LossNotDecreasingAndUnchangedTensorFireOnTheLearningRateZeroPlateau) {
  const auto trial = open_sample("pt-lr0-plateau");
  if (!trial) GTEST_SKIP() << kNoSamples;
  const Tensor loss = trial->tensor("CrossEntropyLoss_output_0");
  const Steps steps = loss.steps();
  ASSERT_EQ(steps.size(), 60u);
  for (const std::int64_t step : steps) {
    ASSERT_EQ(loss.value(step).as_double(0), loss.value(steps.front()).as_double(0))
        << "the loss is bit-identical at every step, step " << step << " is not";
  }
  // LossNotDecreasing (num_steps 10) compares every 10 steps from step 10 on; the loss never
  // falls, so every comparison fires.
  EXPECT_EQ(testing::fired_steps("LossNotDecreasing", *trial), (Steps{10, 20, 30, 40, 50}));
  // UnchangedTensor (num_steps 3) fires once three saves of the loss agree: from the third.
  const Steps unchanged = testing::fired_steps("UnchangedTensor", *trial);
  EXPECT_EQ(unchanged, Steps(steps.begin() + 2, steps.end()));
}

// LossNotDecreasing's rows for the samples with noisy per-batch losses, from its definition
// (docs/rules.md) applied to the saved losses by hand: for each tensor of the `losses`
// collection, at each saved step no sooner than num_steps (10) after its last comparison, the
// loss against the newest saved one at least 10 steps behind; it fires unless it fell by more
// than 0.1%. Mode GLOBAL: every saved step, in global numbering.
TEST(BuiltinRulesOnSamplesTest, LossNotDecreasingFiresWhereTheLossDidNotFallOverTenSteps) {
  const std::vector<std::pair<std::string, std::string>> samples = {
      {"pt-mlp-basic", "50, 70, 90, 110, 130, 150, 160, 170, 180"},
      {"pt-mlp-reductions", "48, 70, 92"},
      {"pt-ddp-2workers", "12, 68, 78, 100"}};
  for (const auto& [name, table] : samples) {
    SCOPED_TRACE(name);
    const auto trial = open_sample(name);
    if (!trial) GTEST_SKIP() << kNoSamples;
    std::set<std::int64_t> fired;
    const std::vector<std::string> losses = trial->tensor_names({.collection = "losses"});
    ASSERT_FALSE(losses.empty());
    for (const std::string& tensor_name : losses) {
      const Tensor loss = trial->tensor(tensor_name);
      const Steps saved = loss.steps();
      std::optional<std::int64_t> last_check;
      for (const std::int64_t step : saved) {
        if (last_check && step - *last_check < 10) continue;
        std::optional<std::int64_t> base;
        for (const std::int64_t before : saved) {
          if (before <= step - 10) base = before;  // saved steps are in order: the newest wins
        }
        if (!base) continue;
        last_check = step;
        if (loss.value(step).as_double(0) > loss.value(*base).as_double(0) * (1 - 0.1 / 100)) {
          fired.insert(step);
        }
      }
    }
    const Steps derived(fired.begin(), fired.end());
    EXPECT_EQ(compact(derived), table);
    EXPECT_EQ(testing::fired_steps("LossNotDecreasing", *trial), derived);
  }
}

// AllZero and ExplodingTensor on pt-dtypes, from their definitions applied to every tensor
// saved at each step, decoded here from its raw bytes: AllZero fires where some integer or
// floating-point tensor is all zeros (threshold 100%), ExplodingTensor where some floating-point
// tensor holds a NaN or an infinity.
TEST(BuiltinRulesOnSamplesTest, AllZeroAndExplodingTensorFireWhereTheRawValuesSaySo) {
  const auto trial = open_sample("pt-dtypes");
  if (!trial) GTEST_SKIP() << kNoSamples;
  Steps all_zero;
  Steps exploding;
  for (const std::int64_t step : trial->steps()) {
    bool zeros = false;
    bool non_finite = false;
    for (const std::string& name : trial->tensor_names({.step = step})) {
      const TensorValue value = trial->tensor(name).value(step);
      if (value.is_string() || value.size() == 0 || !is_real_numeric(value.dtype()) ||
          value.dtype() == DType::Bool) {
        continue;
      }
      const testing::DecodedElements elements = testing::decode_elements(value);
      zeros = zeros || std::all_of(elements.values.begin(), elements.values.end(),
                                   [](long double element) { return element == 0; });
      if (is_floating(value.dtype())) {
        non_finite =
            non_finite || std::any_of(elements.values.begin(), elements.values.end(),
                                      [](long double element) { return !std::isfinite(element); });
      }
    }
    if (zeros) all_zero.push_back(step);
    if (non_finite) exploding.push_back(step);
  }
  EXPECT_EQ(compact(all_zero), expectations().at("pt-dtypes").at("AllZero").fired);
  EXPECT_EQ(testing::fired_steps("AllZero", *trial), all_zero);
  EXPECT_EQ(compact(exploding), expectations().at("pt-dtypes").at("ExplodingTensor").fired);
  EXPECT_EQ(testing::fired_steps("ExplodingTensor", *trial), exploding);
}

// Overfit on pt-mlp-basic ("90-99, 190-199"), from its definition (docs/rules.md) applied to
// the saved losses: at each EVAL step, the mean of the evaluation pass so far against the mean
// of the TRAIN steps before the pass; more than 10% above (patience 1) fires.
TEST(BuiltinRulesOnSamplesTest, OverfitFiresWhereValidationIsMoreThanTenPercentAboveTraining) {
  const auto trial = open_sample("pt-mlp-basic");
  if (!trial) GTEST_SKIP() << kNoSamples;
  const std::vector<std::string> losses = trial->tensor_names({.collection = "losses"});
  ASSERT_EQ(losses.size(), 1U);
  const Tensor loss = trial->tensor(losses.front());
  std::vector<double> training;  // the TRAIN losses since the last pass
  double training_mean = 0.0;
  std::vector<double> pass;
  std::optional<Mode> last;
  Steps fired;
  for (const std::int64_t step : loss.steps()) {
    const Mode mode = trial->mode(step).value_or(Mode::Global);
    const double value = loss.value(step).as_double(0);
    if (mode == Mode::Train) {
      if (last == Mode::Eval) training.clear();
      training.push_back(value);
    } else if (mode == Mode::Eval) {
      if (last != Mode::Eval) {
        ASSERT_FALSE(training.empty()) << "a pass at " << step << " with no training before it";
        double sum = 0.0;
        for (const double each : training) sum += each;
        training_mean = sum / static_cast<double>(training.size());
        pass.clear();
      }
      pass.push_back(value);
      double sum = 0.0;
      for (const double each : pass) sum += each;
      const double validation = sum / static_cast<double>(pass.size());
      if ((validation - training_mean) / std::fabs(training_mean) > 0.1) fired.push_back(step);
    }
    last = mode;
  }
  EXPECT_EQ(testing::fired_steps("Overfit", *trial), fired);
  EXPECT_EQ(compact(fired), expectations().at("pt-mlp-basic").at("Overfit").fired);
}

// TensorVariance (max_threshold 1e4) on pt-exploding ("1-3"): each tensor's population variance
// computed by the test from the raw bytes (tests/support/reference_reductions); a step fires
// when some tensor of two or more elements has a finite variance above 1e4.
TEST(BuiltinRulesOnSamplesTest, TensorVarianceFiresWhereSomeTensorsVarianceExceedsTheThreshold) {
  const auto trial = open_sample("pt-exploding");
  if (!trial) GTEST_SKIP() << kNoSamples;
  Steps fired;
  for (const std::int64_t step : trial->steps()) {
    bool above = false;
    for (const std::string& name : trial->tensor_names({.step = step})) {
      const TensorValue value = trial->tensor(name).value(step);
      ASSERT_TRUE(trial->tensor(name).saved_reductions(step).empty())
          << name << " saves reductions: the rule would read those";
      if (value.is_string() || value.size() < 2 || !is_real_numeric(value.dtype())) continue;
      const auto variance = testing::reference_reduction(testing::decode_elements(value),
                                                         {Reduction::Variance, false});
      above = above || (std::isfinite(static_cast<double>(variance.value)) &&
                        static_cast<double>(variance.value) > 1e4);
    }
    if (above) fired.push_back(step);
  }
  EXPECT_EQ(testing::fired_steps("TensorVariance", *trial, kTensorVarianceParameters), fired);
  EXPECT_EQ(compact(fired), expectations().at("pt-exploding").at("TensorVariance").fired);
}

// On pt-lr0-plateau the loss is bit-identical at every step (checked above) and every step is
// TRAIN, numbered 0, 1, 2, ...: both of these rules' outcomes follow by hand.
//   Overtraining (patience_train 5, delta 0.01, no evaluation): the first window (0-4) sets the
//   best; the second (5-9) has the same mean, not 0.01 below it: stalled from step 9, and no
//   later window improves: every step from 9 fires.
//   PoorWeightInitialization (steps 10, patience 5): the first 10 TRAIN steps are analysed;
//   the loss never goes below its first value, so from step 5 it has gone 5 steps without a
//   new lowest value: 5-9. Its other two signs cannot hold here: no tensor matches
//   `.*relu_input`, and every gradient's 5th-95th percentile range at steps 0-4 is checked
//   below to be wide.
TEST(BuiltinRulesOnSamplesTest,
     OvertrainingAndPoorWeightInitializationOnTheLearningRateZeroPlateau) {
  const auto trial = open_sample("pt-lr0-plateau");
  if (!trial) GTEST_SKIP() << kNoSamples;
  const Steps steps = trial->steps();
  for (std::size_t i = 0; i < steps.size(); ++i) {
    ASSERT_EQ(steps[i], static_cast<std::int64_t>(i));
    ASSERT_EQ(trial->mode(steps[i]), Mode::Train);
  }
  EXPECT_EQ(testing::fired_steps("Overtraining", *trial), Steps(steps.begin() + 9, steps.end()));

  EXPECT_TRUE(trial->tensor_names({.regex = {".*relu_input"}}).empty());
  for (const std::int64_t step : {0, 1, 2, 3, 4}) {
    for (const std::string& name : trial->tensor_names({.step = step, .collection = "gradients"})) {
      std::vector<double> values;
      const TensorValue value = trial->tensor(name).value(step);
      for (std::int64_t i = 0; i < value.size(); ++i) values.push_back(value.as_double(i));
      std::sort(values.begin(), values.end());
      // numpy's linear interpolation: position q (n - 1).
      const auto percentile = [&](double q) {
        const double position = q * static_cast<double>(values.size() - 1);
        const auto below = static_cast<std::size_t>(position);
        const std::size_t above = std::min(below + 1, values.size() - 1);
        return values[below] +
               (position - static_cast<double>(below)) * (values[above] - values[below]);
      };
      EXPECT_GE(percentile(0.95) - percentile(0.05), 0.001) << name << " at step " << step;
    }
  }
  EXPECT_EQ(testing::fired_steps("PoorWeightInitialization", *trial), (Steps{5, 6, 7, 8, 9}));
}

}  // namespace
}  // namespace rulestream
