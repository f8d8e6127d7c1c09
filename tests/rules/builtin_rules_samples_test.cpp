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

#include "pipeline/trial/tensor.hpp"
#include "rules/rule_registry.hpp"
#include "tests/support/reference_counts.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/smdebug_expected.hpp"
#include "tests/support/test_support.hpp"

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

// The expected outcome of every (sample, rule). Rules whose names are absent for a sample
// make the test fail: a new built-in needs its row.
using Expectations = std::map<std::string, std::map<std::string, Outcome>>;

const Expectations& expectations() {
  // Rules that read tensors the samples do not have still evaluate every step (and stay
  // quiet); ClassImbalance, Confusion and TreeDepth evaluate none: no XGBoost labels,
  // predictions or trees, so every step is skipped. VanishingGradient evaluates only the steps
  // that saved gradients (TRAIN steps, every 5th in pt-mlp-basic).
  static const Expectations table = {
      {"pt-mlp-basic",  // healthy: quiet but for the two documented exceptions
       {{"AllZero", {"quiet", 200}},
        {"CheckInputImages", {"quiet", 200}},
        {"ClassImbalance", {"quiet", 0}},
        {"Confusion", {"quiet", 0}},
        {"DeadRelu", {"quiet", 200}},
        {"ExplodingTensor", {"quiet", 200}},
        {"FeatureImportanceOverweight", {"quiet", 200}},
        // Single per-batch losses 10 steps apart (TRAIN and EVAL mixed in mode GLOBAL) rise at
        // 9 of 20 checks; smdebug's reading of the rule fires at the same steps.
        {"LossNotDecreasing", {"50, 70, 90, 110, 130, 150, 160, 170, 180", 200}},
        {"NLPSequenceRatio", {"quiet", 200}},
        // The 2nd and 4th evaluation passes: validation mean 0.69-0.75 vs training 0.489,
        // then 0.45-0.58 vs 0.380: more than 10% above.
        {"Overfit", {"90-99, 190-199", 200}},
        {"Overtraining", {"quiet", 200}},
        {"PoorWeightInitialization", {"quiet", 200}},
        {"SaturatedActivation", {"quiet", 200}},
        {"SimilarAcrossRuns", {"quiet", 200}},
        {"TensorVariance", {"quiet", 200}},
        {"StalledTrainingRule", {"quiet", 200}},
        {"TreeDepth", {"quiet", 0}},
        {"UnchangedTensor", {"quiet", 200}},
        {"VanishingGradient", {"quiet", 32}},
        {"WeightUpdateRatio", {"quiet", 200}}}},
      {"pt-mlp-reductions",  // the same job saving reductions: the same two rules fire
       {{"AllZero", {"quiet", 25}},
        {"CheckInputImages", {"quiet", 25}},
        {"ClassImbalance", {"quiet", 0}},
        {"Confusion", {"quiet", 0}},
        {"DeadRelu", {"quiet", 25}},
        {"ExplodingTensor", {"quiet", 25}},
        {"FeatureImportanceOverweight", {"quiet", 25}},
        {"LossNotDecreasing", {"48, 70, 92", 25}},
        {"NLPSequenceRatio", {"quiet", 25}},
        {"Overfit", {"92, 96", 25}},
        {"Overtraining", {"quiet", 25}},
        {"PoorWeightInitialization", {"quiet", 25}},
        {"SaturatedActivation", {"quiet", 25}},
        {"SimilarAcrossRuns", {"quiet", 25}},
        {"TensorVariance", {"quiet", 25}},
        {"StalledTrainingRule", {"quiet", 25}},
        {"TreeDepth", {"quiet", 0}},
        {"UnchangedTensor", {"quiet", 25}},
        {"VanishingGradient", {"quiet", 20}},
        {"WeightUpdateRatio", {"quiet", 25}}}},
      {"pt-ddp-2workers",  // healthy, two workers
       {{"AllZero", {"quiet", 36}},
        {"CheckInputImages", {"quiet", 36}},
        {"ClassImbalance", {"quiet", 0}},
        {"Confusion", {"quiet", 0}},
        {"DeadRelu", {"quiet", 36}},
        {"ExplodingTensor", {"quiet", 36}},
        {"FeatureImportanceOverweight", {"quiet", 36}},
        {"LossNotDecreasing", {"12, 68, 78, 100", 36}},
        {"NLPSequenceRatio", {"quiet", 36}},
        {"Overfit", {"quiet", 36}},
        {"Overtraining", {"quiet", 36}},
        {"PoorWeightInitialization", {"quiet", 36}},
        {"SaturatedActivation", {"quiet", 36}},
        {"SimilarAcrossRuns", {"quiet", 36}},
        {"TensorVariance", {"quiet", 36}},
        {"StalledTrainingRule", {"quiet", 36}},
        {"TreeDepth", {"quiet", 0}},
        {"UnchangedTensor", {"quiet", 36}},
        {"VanishingGradient", {"quiet", 24}},
        {"WeightUpdateRatio", {"quiet", 36}}}},
      {"pt-dtypes",  // synthetic tensors of every dtype, saved unchanged; NaN/Inf at step 10
       {{"AllZero", {"0, 2, 4, 6, 8, 10, 12, 14, 16", 9}},  // dt_allzero
        {"CheckInputImages", {"quiet", 9}},
        {"ClassImbalance", {"quiet", 0}},
        {"Confusion", {"quiet", 0}},
        {"DeadRelu", {"quiet", 9}},
        {"ExplodingTensor", {"10", 9}},  // dt_float32_naninf
        {"FeatureImportanceOverweight", {"quiet", 9}},
        {"LossNotDecreasing", {"quiet", 9}},
        {"NLPSequenceRatio", {"quiet", 9}},
        {"Overfit", {"quiet", 9}},
        {"Overtraining", {"quiet", 9}},
        {"PoorWeightInitialization", {"quiet", 9}},
        {"SaturatedActivation", {"quiet", 9}},
        {"SimilarAcrossRuns", {"quiet", 9}},                       // NaN equals NaN across runs
        {"TensorVariance", {"0, 2, 4, 6, 8, 10, 12, 14, 16", 9}},  // dt_int32, dt_int64
        {"StalledTrainingRule", {"quiet", 9}},
        {"TreeDepth", {"quiet", 0}},
        {"UnchangedTensor", {"4, 6, 8", 9}},  // dt_allzero, dt_float32_naninf before step 10
        {"VanishingGradient", {"quiet", 9}},
        {"WeightUpdateRatio", {"quiet", 9}}}},
      {"pt-exploding",  // loss 1.2e3, 3.7e7, 4e24, Inf at step 3, NaN from step 4
       {{"AllZero", {"quiet", 32}},
        {"CheckInputImages", {"quiet", 32}},
        {"ClassImbalance", {"quiet", 0}},
        {"Confusion", {"quiet", 0}},
        {"DeadRelu", {"quiet", 32}},
        {"ExplodingTensor", {"3-31", 32}},
        {"FeatureImportanceOverweight", {"quiet", 32}},
        {"LossNotDecreasing", {"quiet", 32}},  // NaN compares as neither rising nor falling
        {"NLPSequenceRatio", {"quiet", 32}},
        {"Overfit", {"quiet", 32}},
        {"Overtraining", {"quiet", 32}},  // windows of NaN losses are not judged
        {"PoorWeightInitialization", {"quiet", 32}},
        {"SaturatedActivation", {"quiet", 32}},
        {"SimilarAcrossRuns", {"quiet", 32}},  // NaN equals NaN across runs
        {"TensorVariance", {"1-3", 32}},       // then NaN variances, which compare with nothing
        {"StalledTrainingRule", {"quiet", 32}},
        {"TreeDepth", {"quiet", 0}},
        {"UnchangedTensor", {"quiet", 32}},
        {"VanishingGradient", {"quiet", 32}},
        {"WeightUpdateRatio", {"1-4", 32}}}},
      {"pt-lr0-plateau",  // learning rate 0: loss bit-identical, weights never change
       {{"AllZero", {"quiet", 60}},
        {"CheckInputImages", {"quiet", 60}},
        {"ClassImbalance", {"quiet", 0}},
        {"Confusion", {"quiet", 0}},
        {"DeadRelu", {"quiet", 60}},
        {"ExplodingTensor", {"quiet", 60}},
        {"FeatureImportanceOverweight", {"quiet", 60}},
        {"LossNotDecreasing", {"10, 20, 30, 40, 50", 60}},
        {"NLPSequenceRatio", {"quiet", 60}},
        {"Overfit", {"quiet", 60}},
        {"Overtraining", {"9-59", 60}},
        {"PoorWeightInitialization", {"5-9", 60}},
        {"SaturatedActivation", {"quiet", 60}},
        {"SimilarAcrossRuns", {"quiet", 60}},
        {"TensorVariance", {"quiet", 60}},
        {"StalledTrainingRule", {"quiet", 60}},
        {"TreeDepth", {"quiet", 0}},
        {"UnchangedTensor", {"2-59", 60}},
        {"VanishingGradient", {"quiet", 20}},
        {"WeightUpdateRatio",
         {"3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39, 42, 45, 48, 51, 54, 57", 60}}}}};
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

// rulestream's own series rules are not in the table: NonFinite's row is read off the data
// (above); LossSpike and GradNormSpike are checked on jobs whose values give their firing steps
// by hand (series_rule_on_trial_test.cpp, series_rules_test.cpp).
const std::set<std::string> kOwnSeriesRules = {"NonFinite", "LossSpike", "GradNormSpike"};

TEST_P(BuiltinRulesSamplesTest, EveryBuiltinRuleFiresExactlyWhereExpected) {
  const testing::SampleTrial& sample = GetParam();
  // A sample without rows fails for every rule, each message saying what the rule did.
  static const std::map<std::string, Outcome> kNoRows;
  const auto found = expectations().find(sample.name);
  const auto& rows = found == expectations().end() ? kNoRows : found->second;
  const Trial trial = Trial::open(sample.trial_dir.string());

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
    EXPECT_EQ(actual, expected->second);
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

}  // namespace
}  // namespace rulestream
