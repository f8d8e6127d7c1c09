// The series rules (NonFinite, LossSpike, GradNormSpike, LossNotDecreasing on series) built from
// the registry as the TensorBoard pipeline builds them, fed by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "rules/rule_registry.hpp"
#include "rules/series_rule.hpp"

namespace rulestream {
namespace {

using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::shared_ptr<SeriesRule> series_rule(const std::string& name,
                                        const RuleParameters& parameters = {}) {
  auto rule = RuleRegistry::builtin().create_series(name, parameters);
  EXPECT_NE(rule, nullptr) << name;
  return rule;
}

SeriesInfo series(const std::string& tag, SeriesRole role, Mode mode = Mode::Train) {
  SeriesInfo info;
  info.run = "train";
  info.tag = tag;
  info.role = role;
  info.mode = mode;
  return info;
}

struct Fired {
  std::int64_t step;
  Finding finding;
};

// Feeds (step, value) pairs; returns where the rule fired.
std::vector<Fired> feed(const SeriesRule& rule, const SeriesInfo& info,
                        const std::vector<std::pair<std::int64_t, double>>& values) {
  auto state = rule.start(info);
  std::vector<Fired> fired;
  for (const auto& [step, value] : values) {
    Finding finding;
    if (state->add(step, value, finding)) fired.push_back({step, finding});
  }
  return fired;
}

std::vector<std::pair<std::int64_t, double>> numbered(const std::vector<double>& values,
                                                      std::int64_t stride = 1) {
  std::vector<std::pair<std::int64_t, double>> out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    out.emplace_back(static_cast<std::int64_t>(i) * stride, values[i]);
  }
  return out;
}

TEST(NonFiniteRuleTest, FiresOnceAtTheFirstNaNOrInfinityOfEachSeries) {
  const auto rule = series_rule("NonFinite");
  const auto fired = feed(*rule, series("train/explained_variance", SeriesRole::Other),
                          numbered({0.5, 0.4, kNaN, 0.3, kInf, kNaN}, 4096));
  ASSERT_EQ(fired.size(), 1U);
  EXPECT_EQ(fired[0].step, 2 * 4096);
  EXPECT_THAT(fired[0].finding.message,
              HasSubstr("train: train/explained_variance is NaN at step 8192"));
  EXPECT_EQ(fired[0].finding.tensors, std::vector<std::string>{"train: train/explained_variance"});
}

TEST(NonFiniteRuleTest, StaysQuietOnFiniteValuesAndWatchesWhatTagRegexNames) {
  const auto all = series_rule("NonFinite");
  EXPECT_TRUE(feed(*all, series("loss", SeriesRole::Loss), numbered({1e30, -1e30, 0.0})).empty());
  EXPECT_TRUE(all->watches(series("lr", SeriesRole::LearningRate)));
  const auto some = series_rule("NonFinite", {{"tag_regex", "^eval/"}});
  EXPECT_TRUE(some->watches(series("eval/loss", SeriesRole::Loss)));
  EXPECT_FALSE(some->watches(series("train/loss", SeriesRole::Loss)));
}

TEST(NonFiniteRuleTest, ABadParameterIsNamed) {
  try {
    RuleRegistry::builtin().create_series("NonFinite", {{"tag_regex", "(unclosed"}});
    FAIL() << "no error";
  } catch (const RuleConfigError& error) {
    EXPECT_THAT(error.what(), HasSubstr("tag_regex"));
  }
  EXPECT_THROW(RuleRegistry::builtin().create_series("NonFinite", {{"window", "3"}}),
               RuleConfigError);
}

TEST(LossSpikeRuleTest, FiresWhereALossJumpsFarAboveItsLevel) {
  // 40 values alternating 2.0 and 2.2, then 9.0: the level is about 2.1 and the spread about
  // 1.2533 x 0.1; 9.0 is some 55 spreads and 330% above. The values after settle back.
  std::vector<double> values;
  for (int i = 0; i < 40; ++i) values.push_back(i % 2 == 0 ? 2.0 : 2.2);
  values.push_back(9.0);
  for (int i = 0; i < 10; ++i) values.push_back(2.1);
  const auto rule = series_rule("LossSpike");
  const auto fired = feed(*rule, series("train/loss", SeriesRole::Loss), numbered(values, 10));
  ASSERT_EQ(fired.size(), 1U);
  EXPECT_EQ(fired[0].step, 400);
  EXPECT_THAT(fired[0].finding.message, HasSubstr("train: train/loss 9 at step 400"));
  EXPECT_TRUE(rule->watches(series("val_loss", SeriesRole::Loss, Mode::Eval)));
  EXPECT_FALSE(rule->watches(series("train/grad_norm", SeriesRole::GradientNorm)));
}

TEST(LossSpikeRuleTest, StaysQuietOnAHealthyNoisyLoss) {
  // A loss falling from 3 towards 0.5 with +-10% noise, as training losses do.
  std::vector<double> values;
  for (int i = 0; i < 500; ++i) {
    const double trend = 0.5 + 2.5 * std::exp(-i / 100.0);
    values.push_back(trend * (1.0 + 0.1 * std::sin(i * 1.7)));
  }
  EXPECT_TRUE(
      feed(*series_rule("LossSpike"), series("loss", SeriesRole::Loss), numbered(values)).empty());
}

TEST(LossSpikeRuleTest, BadParametersAreNamed) {
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"window", "0"}, {"threshold", "-1"}, {"warmup", "0"}, {"min_increase_percent", "x"}}) {
    try {
      RuleRegistry::builtin().create_series("LossSpike", {{name, value}});
      FAIL() << name << "=" << value << " was taken";
    } catch (const RuleConfigError& error) {
      EXPECT_THAT(error.what(), HasSubstr(name));
    }
  }
}

TEST(GradNormSpikeRuleTest, WatchesGradientNormsAndFiresOnAJump) {
  std::vector<double> values(30, 1.5);
  values.push_back(40.0);
  const auto rule = series_rule("GradNormSpike");
  EXPECT_FALSE(rule->watches(series("train/loss", SeriesRole::Loss)));
  const auto fired =
      feed(*rule, series("train/grad_norm", SeriesRole::GradientNorm), numbered(values, 500));
  ASSERT_EQ(fired.size(), 1U);
  EXPECT_EQ(fired[0].step, 15000);
  EXPECT_TRUE(feed(*rule, series("train/grad_norm", SeriesRole::GradientNorm),
                   numbered(std::vector<double>(100, 1.5)))
                  .empty());
}

TEST(LossNotDecreasingSeriesTest, ComparesWithTheValueNumStepsBack) {
  // 100 - step until step 15, then flat at 85. num_steps 10: compared at 10 (90 vs 100: fell),
  // 20 (85 vs 90: fell 5.6%), 30 (85 vs 85: did not fall) -> fires at 30, and at 40.
  std::vector<double> values;
  for (int step = 0; step <= 40; ++step) values.push_back(step <= 15 ? 100.0 - step : 85.0);
  const auto rule = series_rule("LossNotDecreasing");
  const auto fired = feed(*rule, series("train/loss", SeriesRole::Loss), numbered(values));
  ASSERT_EQ(fired.size(), 2U);
  EXPECT_EQ(fired[0].step, 30);
  EXPECT_EQ(fired[1].step, 40);
  EXPECT_THAT(fired[0].finding.message, HasSubstr("85 at step 30 vs 85 at step 20"));
}

TEST(LossNotDecreasingSeriesTest, SparseStepsCompareWithTheNewestValueFarEnoughBack) {
  // Steps 0, 7, 14, 21: at 14 the base is step 0 (7 is less than 10 back); next comparison no
  // sooner than 24, so at 28 against 14 (newest at most 18).
  const std::vector<std::pair<std::int64_t, double>> values{
      {0, 10.0}, {7, 9.0}, {14, 10.5}, {21, 9.0}, {28, 12.0}};
  const auto fired =
      feed(*series_rule("LossNotDecreasing"), series("loss", SeriesRole::Loss), values);
  ASSERT_EQ(fired.size(), 2U);
  EXPECT_EQ(fired[0].step, 14);
  EXPECT_THAT(fired[0].finding.message, HasSubstr("vs 10 at step 0"));
  EXPECT_EQ(fired[1].step, 28);
  EXPECT_THAT(fired[1].finding.message, HasSubstr("vs 10.5 at step 14"));
}

TEST(LossNotDecreasingSeriesTest, ModeAndSelectionChooseTheSeries) {
  const auto eval = series_rule("LossNotDecreasing", {{"mode", "EVAL"}});
  EXPECT_TRUE(eval->watches(series("val_loss", SeriesRole::Loss, Mode::Eval)));
  EXPECT_FALSE(eval->watches(series("train_loss", SeriesRole::Loss, Mode::Train)));
  const auto by_name = series_rule("LossNotDecreasing",
                                   {{"use_losses_collection", "False"}, {"tensor_regex", "acc"}});
  EXPECT_TRUE(by_name->watches(series("accuracy", SeriesRole::Other)));
  EXPECT_FALSE(by_name->watches(series("loss", SeriesRole::Loss)));
  EXPECT_THROW(RuleRegistry::builtin().create_series("LossNotDecreasing", {{"num_steps", "0"}}),
               RuleConfigError);
}

TEST(SeriesRulesTest, RulesOverSmdebugTensorsHaveNoSeriesForm) {
  EXPECT_EQ(RuleRegistry::builtin().create_series("DeadRelu", {}), nullptr);
  EXPECT_THROW(RuleRegistry::builtin().create_series("NoSuchRule", {}), RuleConfigError);
}

TEST(ExplodingTensorSeriesTest, FiresAtEveryNaNOrInfinityOfEverySeries) {
  const auto rule = series_rule("ExplodingTensor");
  EXPECT_TRUE(rule->watches(series("lr", SeriesRole::LearningRate)));
  const auto fired =
      feed(*rule, series("loss", SeriesRole::Loss), numbered({1.0, kNaN, 2.0, kInf, -kInf}));
  ASSERT_EQ(fired.size(), 3U);
  EXPECT_EQ(fired[0].step, 1);
  EXPECT_EQ(fired[1].step, 3);
  EXPECT_EQ(fired[2].step, 4);
  const auto nan_only = series_rule("ExplodingTensor", {{"only_nan", "True"}});
  EXPECT_EQ(feed(*nan_only, series("loss", SeriesRole::Loss), numbered({kInf, kNaN})).size(), 1U);
  const auto losses = series_rule("ExplodingTensor", {{"collection_names", "losses"}});
  EXPECT_FALSE(losses->watches(series("accuracy", SeriesRole::Other)));
  EXPECT_TRUE(losses->watches(series("val_loss", SeriesRole::Loss, Mode::Eval)));
}

TEST(UnchangedTensorSeriesTest, FiresWhenAValueIsCloseToItsLastNumStepsMinusOne) {
  // num_steps 3: a value close to both values before it. 1, 1.000001 (within rtol 1e-5), 1 ->
  // fires at the third; then 2 breaks it; 2, 2 fire again from the third 2 on.
  const auto rule = series_rule("UnchangedTensor");
  const auto fired = feed(*rule, series("train/loss", SeriesRole::Loss),
                          numbered({1.0, 1.000001, 1.0, 2.0, 2.0, 2.0, 3.0}));
  ASSERT_EQ(fired.size(), 2U);
  EXPECT_EQ(fired[0].step, 2);
  EXPECT_EQ(fired[1].step, 5);
  EXPECT_THAT(fired[1].finding.message, HasSubstr("has stayed at 2 over its last 3 values"));
  // NaN is close to NaN only with equal_nan.
  EXPECT_TRUE(feed(*rule, series("loss", SeriesRole::Loss), numbered({kNaN, kNaN, kNaN})).empty());
  EXPECT_EQ(feed(*series_rule("UnchangedTensor", {{"equal_nan", "True"}}),
                 series("loss", SeriesRole::Loss), numbered({kNaN, kNaN, kNaN}))
                .size(),
            1U);
}

TEST(UnchangedTensorSeriesTest, ByDefaultOnlyTrainingLossesAndGradientNormsAreWatched) {
  const auto rule = series_rule("UnchangedTensor");
  EXPECT_FALSE(rule->watches(series("train/learning_rate", SeriesRole::LearningRate)));
  EXPECT_FALSE(rule->watches(series("train/clip_range", SeriesRole::Other)));
  EXPECT_FALSE(rule->watches(series("eval/loss", SeriesRole::Loss, Mode::Eval)));
  EXPECT_TRUE(rule->watches(series("train/grad_norm", SeriesRole::GradientNorm)));
  const auto lr = series_rule("UnchangedTensor", {{"tensor_regex", "learning_rate"}});
  EXPECT_TRUE(lr->watches(series("train/learning_rate", SeriesRole::LearningRate)));
  EXPECT_THROW(RuleRegistry::builtin().create_series("UnchangedTensor", {{"num_steps", "1"}}),
               RuleConfigError);
}

TEST(HistogramFigureRuleTest, VanishingGradientWatchesTheAbsoluteMeanOfGradientHistograms) {
  const auto rule = series_rule("VanishingGradient", {{"threshold", "1e-6"}});
  SeriesInfo gradient = series("grad/fc1", SeriesRole::Gradient);
  gradient.figure = "abs_mean";
  SeriesInfo weight = series("fc1/weight", SeriesRole::Other);
  weight.figure = "abs_mean";
  SeriesInfo variance = gradient;
  variance.figure = "variance";
  EXPECT_TRUE(rule->watches(gradient));
  EXPECT_FALSE(rule->watches(weight));
  EXPECT_FALSE(rule->watches(variance));
  EXPECT_FALSE(rule->watches(series("grad_norm", SeriesRole::GradientNorm)));
  const auto fired = feed(*rule, gradient, numbered({1e-3, 2e-6, 5e-7, 1e-9}));
  ASSERT_EQ(fired.size(), 2U);
  EXPECT_EQ(fired[0].step, 2);
  EXPECT_THAT(fired[0].finding.message, HasSubstr("grad/fc1 (abs_mean) 5e-07 < threshold 1e-06"));
}

TEST(HistogramFigureRuleTest, TensorVarianceWatchesEveryHistogramsVarianceWithinItsBounds) {
  const auto rule =
      series_rule("TensorVariance", {{"max_threshold", "10"}, {"min_threshold", "0.01"}});
  SeriesInfo weight = series("fc1/weight", SeriesRole::Other);
  weight.figure = "variance";
  EXPECT_TRUE(rule->watches(weight));
  const auto fired = feed(*rule, weight, numbered({1.0, 11.0, 0.001, 5.0}));
  ASSERT_EQ(fired.size(), 2U);
  EXPECT_EQ(fired[0].step, 1);
  EXPECT_EQ(fired[1].step, 2);
  EXPECT_THROW(RuleRegistry::builtin().create_series("TensorVariance", {}), RuleConfigError);
}

TEST(OverfitSeriesTest, ComparesEachValidationPassWithTheTrainingWindowBeforeIt) {
  // Training 1.0 at steps 0..9, validation 1.05 at step 9: ratio 0.05, quiet. Training 1.0 at
  // 10..19, validation 1.2 at 19 (ratio 0.2 > 0.1): fires; 1.3 at 20, the same pass (no
  // training between): its mean 1.25, ratio 0.25: fires again.
  const auto rule = series_rule("Overfit");
  SeriesInfo train = series("train/loss", SeriesRole::Loss, Mode::Train);
  train.group = "job\n/loss";
  SeriesInfo validation = series("eval/loss", SeriesRole::Loss, Mode::Eval);
  validation.group = train.group;
  ASSERT_TRUE(rule->watches(train));
  ASSERT_TRUE(rule->watches(validation));
  auto train_state = rule->start(train);
  auto validation_state = rule->start(validation);
  Finding finding;
  std::vector<std::int64_t> fired;
  const auto feed_train = [&](int from, int to) {
    for (int step = from; step <= to; ++step) EXPECT_FALSE(train_state->add(step, 1.0, finding));
  };
  const auto feed_validation = [&](std::int64_t step, double loss) {
    if (validation_state->add(step, loss, finding)) fired.push_back(step);
  };
  feed_validation(0, 5.0);  // before any training window: not judged
  feed_train(0, 9);
  feed_validation(9, 1.05);
  feed_train(10, 19);
  feed_validation(19, 1.2);
  feed_validation(20, 1.3);
  EXPECT_EQ(fired, (std::vector<std::int64_t>{19, 20}));
  EXPECT_THAT(finding.message, HasSubstr("mean validation loss 1.25 is 25% above"));
  SeriesInfo unpaired = series("loss", SeriesRole::Loss);
  EXPECT_FALSE(rule->watches(unpaired));
}

// Overtraining with patience_train 2, patience_validation 2, delta 0.1: windows of two values.
const RuleParameters kShortOvertraining = {
    {"patience_train", "2"}, {"patience_validation", "2"}, {"delta", "0.1"}};

TEST(OvertrainingSeriesTest, ATrainingLossAloneFiresWhileItsWindowsDoNotImprove) {
  // Window means: (0,1) 1.0 the first best; (2,3) 0.5 < 1.0 - 0.1: improves; (4,5) 0.45 is not
  // below 0.5 - 0.1: stalled, fires at 5 and at 6 (the open window is not judged yet); (6,7)
  // 0.3 < 0.4: improves, quiet from 7.
  const auto rule = series_rule("Overtraining", kShortOvertraining);
  const SeriesInfo loss = series("loss", SeriesRole::Loss, Mode::Global);
  ASSERT_TRUE(rule->watches(loss));
  const auto fired = feed(*rule, loss, numbered({1.0, 1.0, 0.5, 0.5, 0.45, 0.45, 0.3, 0.3}));
  ASSERT_EQ(fired.size(), 2U);
  EXPECT_EQ(fired[0].step, 5);
  EXPECT_EQ(fired[1].step, 6);
  EXPECT_THAT(fired[0].finding.message,
              HasSubstr("mean training loss 0.45 over 2 training steps (global 4-5) is not below "
                        "the best window mean 0.5 (global 2-3) by more than delta 0.1"));
  EXPECT_FALSE(rule->watches(series("train/grad_norm", SeriesRole::GradientNorm)));
}

// A loss's training and validation series in one group, and a feeder that keeps the order.
struct OvertrainingPair {
  explicit OvertrainingPair(const SeriesRule& rule) {
    SeriesInfo train = series("train/loss", SeriesRole::Loss, Mode::Train);
    train.group = "job\n/loss";
    SeriesInfo validation = series("eval/loss", SeriesRole::Loss, Mode::Eval);
    validation.group = train.group;
    training = rule.start(train);
    evaluation = rule.start(validation);
  }
  void train(std::int64_t step, double loss) {
    Finding finding;
    if (training->add(step, loss, finding)) fired.push_back(step);
  }
  void validate(std::int64_t step, double loss) {
    Finding finding;
    EXPECT_FALSE(evaluation->add(step, loss, finding)) << "validation values never fire";
  }
  std::unique_ptr<SeriesState> training;
  std::unique_ptr<SeriesState> evaluation;
  std::vector<std::int64_t> fired;
};

TEST(OvertrainingSeriesTest, AfterAnEvaluationBothSeriesMustStall) {
  // Training windows (0,1) 1.0, (4,5) 0.95: stalled from 5 (0.95 is not below 0.9). Pass (2,3)
  // at 2.0 closes at the training value 4: the first validation window, an improvement, so 5
  // stays quiet. Pass (6,7) closes at 8: at 2.0 again it is stalled when `second_pass` is 2.0,
  // and the rule fires at 8 and 9 (window (8,9) at 0.95 stalls too); at 1.0 it improved: quiet.
  for (const double second_pass : {2.0, 1.0}) {
    const auto rule = series_rule("Overtraining", kShortOvertraining);
    OvertrainingPair pair(*rule);
    pair.train(0, 1.0);
    pair.train(1, 1.0);
    pair.validate(2, 2.0);
    pair.validate(3, 2.0);
    pair.train(4, 0.95);
    pair.train(5, 0.95);
    pair.validate(6, second_pass);
    pair.validate(7, second_pass);
    pair.train(8, 0.95);
    pair.train(9, 0.95);
    const std::vector<std::int64_t> expected =
        second_pass == 2.0 ? std::vector<std::int64_t>{8, 9} : std::vector<std::int64_t>{};
    EXPECT_EQ(pair.fired, expected) << "second pass at " << second_pass;
  }
}

TEST(OvertrainingSeriesTest, TrainingReadBeforeItsValidationRunIsJudgedAlone) {
  // Keras' train/ and validation/ runs are read one after the other, training first: the
  // training values of the previous test, judged on training alone, fire at 5, 8 and 9; the
  // validation values read after end their passes at the training steps between them.
  const auto rule = series_rule("Overtraining", kShortOvertraining);
  OvertrainingPair pair(*rule);
  for (const std::int64_t step : {0, 1}) pair.train(step, 1.0);
  for (const std::int64_t step : {4, 5, 8, 9}) pair.train(step, 0.95);
  for (const std::int64_t step : {2, 3, 6, 7}) pair.validate(step, 2.0);
  EXPECT_EQ(pair.fired, (std::vector<std::int64_t>{5, 8, 9}));
}

TEST(OvertrainingSeriesTest, BadParametersAreNamed) {
  for (const auto& [parameter, value] : std::vector<std::pair<std::string, std::string>>{
           {"patience_train", "0"}, {"patience_validation", "-1"}, {"delta", "-0.5"}}) {
    try {
      RuleRegistry::builtin().create_series("Overtraining", {{parameter, value}});
      ADD_FAILURE() << parameter << "=" << value << " was accepted";
    } catch (const RuleConfigError& error) {
      EXPECT_THAT(error.what(), HasSubstr(parameter));
    }
  }
}

}  // namespace
}  // namespace rulestream
