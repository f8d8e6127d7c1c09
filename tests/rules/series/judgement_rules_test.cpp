// The judgement rules for series (Divergence, GradientExplosion, GradientVanishing,
// OverfittingTrend, Plateau), built from the registry as the TensorBoard pipeline builds them
// and fed hand-made series. Each firing step is derived beside its test from the rule's
// definition (the comment on its class in rules/series/), not read off the rule's output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <vector>

#include "rules/default_rules.hpp"
#include "rules/rule_registry.hpp"
#include "rules/series_rule.hpp"

namespace rulestream {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::shared_ptr<SeriesRule> series_rule(const std::string& name,
                                        const RuleParameters& parameters = {}) {
  auto rule = RuleRegistry::builtin().create_series(name, parameters);
  EXPECT_NE(rule, nullptr) << name;
  return rule;
}

SeriesInfo series(const std::string& tag, SeriesRole role, Mode mode = Mode::Train,
                  const std::string& group = "") {
  SeriesInfo info;
  info.run = "run";
  info.tag = tag;
  info.role = role;
  info.mode = mode;
  info.group = group;
  return info;
}

using Values = std::vector<double>;

// Feeds values at steps 0, 1, 2, ...; the steps where the rule fired, and the last finding.
struct Fed {
  std::vector<std::int64_t> steps;
  Finding last;
};

Fed feed(const SeriesRule& rule, const SeriesInfo& info, const Values& values) {
  auto state = rule.start(info);
  Fed fed;
  for (std::size_t i = 0; i < values.size(); ++i) {
    Finding finding;
    if (state->add(static_cast<std::int64_t>(i), values[i], finding)) {
      fed.steps.push_back(static_cast<std::int64_t>(i));
      fed.last = finding;
    }
  }
  return fed;
}

Values repeated(double value, std::size_t count) {
  return Values(count, value);
}

Values joined(std::initializer_list<Values> parts) {
  Values out;
  for (const Values& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

const SeriesInfo kLoss = series("train/loss", SeriesRole::Loss);
const SeriesInfo kNorm = series("train/grad_norm", SeriesRole::GradientNorm);

// --- Divergence ------------------------------------------------------------------------------

TEST(DivergenceRuleTest, ARiseThatHoldsFiresAtItsSecondValue) {
  // Ten values of 1.0: best level 1.0, no noise, threshold 2 x 1.0 = 2.0. At step 10 the last
  // three values are (1, 1, 3), median 1: not yet. At step 11 they are (1, 3, 3), median 3 > 2:
  // it fires, once; the loss staying at 3 is the same incident.
  const Fed fed =
      feed(*series_rule("Divergence"), kLoss, joined({repeated(1.0, 10), repeated(3.0, 10)}));
  EXPECT_THAT(fed.steps, ElementsAre(11));
  EXPECT_THAT(fed.last.message, HasSubstr("diverged"));
  EXPECT_THAT(fed.last.message, HasSubstr("3x its best level 1"));
}

TEST(DivergenceRuleTest, ALossThatBlowsUpInItsFirstStepsNeedsNoWarmUp) {
  // Step 0 sets the best level 1.0; with fewer than 5 values the threshold is 4 x 1.0. Step 2
  // (5.0) is above it but the last three (1, 1.1, 5) have median 1.1; step 3's (1.1, 5, 9) have
  // median 5 > 4: it fires at step 3.
  const Fed fed = feed(*series_rule("Divergence"), kLoss, {1.0, 1.1, 5.0, 9.0, 11.0, 12.0});
  EXPECT_THAT(fed.steps, ElementsAre(3));
}

TEST(DivergenceRuleTest, AJumpByAnOrderOfMagnitudeFiresAtOnceAndARecoveryReArmsIt) {
  // 12.0 after ten values of 1.0 is >= 10 x the best level: it fires at step 10. From step 11
  // the last three values' median is back at 1.0; after 20 such values (step 30) the rule is
  // ready again, and the jump at step 40 is a second incident.
  Values values = joined({repeated(1.0, 10), {12.0}, repeated(1.0, 29), {12.0}, repeated(1.0, 5)});
  const Fed fed = feed(*series_rule("Divergence"), kLoss, values);
  EXPECT_THAT(fed.steps, ElementsAre(10, 40));
  EXPECT_THAT(fed.last.message, HasSubstr("jumped"));
}

TEST(DivergenceRuleTest, ASeriesWithAHistoryOfExcursionsDoesNotFireOnOneMore) {
  // Three single values of 5.0 (above 3 x the level 1.0, below 10 x the best) at steps 20, 40
  // and 60 make the series spiky; the 50.0 at step 80 is then no jump. The same 50.0 without
  // that history fires.
  Values spiky = repeated(1.0, 100);
  spiky[20] = spiky[40] = spiky[60] = 5.0;
  spiky[80] = 50.0;
  EXPECT_TRUE(feed(*series_rule("Divergence"), kLoss, spiky).steps.empty());
  Values calm = repeated(1.0, 100);
  calm[80] = 50.0;
  EXPECT_THAT(feed(*series_rule("Divergence"), kLoss, calm).steps, ElementsAre(80));
}

TEST(DivergenceRuleTest, ANoisyLossNeedsARiseBeyondItsNoise) {
  // Batches alternating 1.0 and 2.5: every step changes the logarithm by 0.916, the noise is
  // 0.916 / 0.954 = 0.96 and the factor exp(3 x 0.96) = 17.8 over a best level of 1.0 (the
  // early factor, 4, before the fifth value): 2.5 is no rise, nor is a stretch of 4.0s.
  Values values;
  for (int i = 0; i < 60; ++i) values.push_back(i % 2 == 0 ? 1.0 : 2.5);
  for (int i = 0; i < 10; ++i) values.push_back(4.0);
  EXPECT_TRUE(feed(*series_rule("Divergence"), kLoss, values).steps.empty());
}

TEST(DivergenceRuleTest, ALossThatClimbsBackOverHalfItsFallHasDiverged) {
  // Twenty values of 1.0 set the start level 1.0; forty of 0.5 bring the best level to 0.5 (a
  // fall of 50%, past the 20% that counts as progress) with no noise. The threshold is then
  // min(2 x 0.5, 0.5 + 0.5 x (1.0 - 0.5)) = 0.75: at step 61 the last three values (0.5, 0.8,
  // 0.8) have median 0.8 > 0.75, undoing 60% of the fall: it fires there. A climb to 0.7 (40%)
  // does not.
  const Values base = joined({repeated(1.0, 20), repeated(0.5, 40)});
  const Fed fed = feed(*series_rule("Divergence"), kLoss, joined({base, repeated(0.8, 10)}));
  EXPECT_THAT(fed.steps, ElementsAre(61));
  EXPECT_THAT(fed.last.message, HasSubstr("undoing 60% of its fall from 1"));
  EXPECT_TRUE(
      feed(*series_rule("Divergence"), kLoss, joined({base, repeated(0.7, 10)})).steps.empty());
}

TEST(DivergenceRuleTest, ASeriesThatGoesNegativeIsNoLossToJudge) {
  // An RL policy loss changes sign: from its first value at or below 0 the series is left alone.
  Values values = joined({repeated(1.0, 10), {-0.5}, repeated(100.0, 10)});
  EXPECT_TRUE(feed(*series_rule("Divergence"), kLoss, values).steps.empty());
}

TEST(DivergenceRuleTest, BadParametersAreNamed) {
  EXPECT_THROW(series_rule("Divergence", {{"factor", "1"}}), RuleConfigError);
  EXPECT_THROW(series_rule("Divergence", {{"window", "2"}}), RuleConfigError);
  EXPECT_THROW(series_rule("Divergence", {{"confirm", "0"}}), RuleConfigError);
  EXPECT_THROW(series_rule("Divergence", {{"jump_factor", "0.5"}}), RuleConfigError);
}

// --- GradientExplosion -----------------------------------------------------------------------

TEST(GradientExplosionRuleTest, FiresWhenTheRecentMedianIsFiveTimesTheLevelBefore) {
  // 100 norms of 1.0, then 10.0s. The reference (the values before the last 10) stays 1.0 with
  // no spread: threshold 5. At step 104 the last 10 values are five 1.0s and five 10.0s, median
  // (1 + 10) / 2 = 5.5 >= 5: it fires there, once.
  const Fed fed = feed(*series_rule("GradientExplosion"), kNorm,
                       joined({repeated(1.0, 100), repeated(10.0, 30)}));
  EXPECT_THAT(fed.steps, ElementsAre(104));
  EXPECT_THAT(fed.last.message, HasSubstr("exploding"));
}

TEST(GradientExplosionRuleTest, ANoisyNormNeedsMoreThanItsNoise) {
  // A reference cycling through 0.1, 0.3, 1, 3, 10: median 1, log quartiles -1.2 and 1.1
  // (interpolated over 100 values), spread about 1.7, factor exp(1.5 x 1.7) = 12.8 > 5: norms of
  // 8.0 (8x the level) are within its noise. After a smooth reference of 1.0 they fire.
  const Values cycle{0.1, 0.3, 1.0, 3.0, 10.0};
  Values noisy;
  for (int i = 0; i < 100; ++i) noisy.push_back(cycle[static_cast<std::size_t>(i) % 5]);
  for (int i = 0; i < 20; ++i) noisy.push_back(8.0);
  EXPECT_TRUE(feed(*series_rule("GradientExplosion"), kNorm, noisy).steps.empty());
  EXPECT_EQ(feed(*series_rule("GradientExplosion"), kNorm,
                 joined({repeated(1.0, 100), repeated(8.0, 20)}))
                .steps.size(),
            1U);
}

TEST(GradientExplosionRuleTest, ANormThatGrowsSlowlyMovesItsReferenceWithIt) {
  // 1% a value: the window's median lies 5 values back, the reference's 55: 1.01^50 = 1.6x
  // apart, far from 5x. (At 3% a value it would be 4.4x: growth that fast is an explosion.)
  Values values;
  double norm = 0.5;
  for (int i = 0; i < 300; ++i, norm *= 1.01) values.push_back(norm);
  EXPECT_TRUE(feed(*series_rule("GradientExplosion"), kNorm, values).steps.empty());
}

// --- GradientVanishing -----------------------------------------------------------------------

TEST(GradientVanishingRuleTest, FiresWhenTheNormFallsThreeOrdersBelowItsPeak) {
  // Twenty norms of 1.0: peak level 1.0, line 1e-3. At step 20 the last three are (1, 1,
  // 1e-4), median 1; at step 21 (1, 1e-4, 1e-4), median 1e-4 < 1e-3: it fires, once.
  const Fed fed = feed(*series_rule("GradientVanishing"), kNorm,
                       joined({repeated(1.0, 20), repeated(1e-4, 20)}));
  EXPECT_THAT(fed.steps, ElementsAre(21));
  EXPECT_THAT(fed.last.message, HasSubstr("vanishing"));
}

TEST(GradientVanishingRuleTest, ANormThatFallsAHundredfoldIsNoVanishing) {
  EXPECT_TRUE(feed(*series_rule("GradientVanishing"), kNorm,
                   joined({repeated(1.0, 20), repeated(1e-2, 50)}))
                  .steps.empty());
}

// --- OverfittingTrend ------------------------------------------------------------------------

struct PairFed {
  std::vector<std::int64_t> steps;
  Finding last;
};

// A job's training (epoch-level) and validation losses, one value each at steps 9, 19, ...,
// fed training first at each step, as a job writes them.
PairFed feed_pair(const SeriesRule& rule, const Values& training, const Values& validation) {
  auto train = rule.start(series("train_loss_epoch", SeriesRole::Loss, Mode::Train, "job\n_loss"));
  auto val = rule.start(series("val_loss", SeriesRole::Loss, Mode::Eval, "job\n_loss"));
  PairFed fed;
  for (std::size_t i = 0; i < validation.size(); ++i) {
    const auto step = static_cast<std::int64_t>(10 * i + 9);
    Finding finding;
    EXPECT_FALSE(train->add(step, training[i], finding));
    if (val->add(step, validation[i], finding)) {
      fed.steps.push_back(step);
      fed.last = finding;
    }
  }
  return fed;
}

TEST(OverfittingTrendRuleTest, FiresWhenValidationRisesFromItsBestWhileTrainingFalls) {
  // Validation 1.0, 0.8, 0.7 (the best, at step 29, training 0.6 there), then 0.75, 0.85, 0.95,
  // 1.05. The absolute log changes between consecutive values: 0.2231, 0.1335, 0.0690, 0.1252,
  // 0.1112, 0.1001. At step 59, the third value since the best, their median is 0.1252 and the
  // rise needed exp(3 x 0.1252) - 1 = 45.6%: 0.95 is 35.7% up, not enough. At step 69 the
  // median is (0.1112 + 0.1252) / 2 = 0.1182, the rise needed 42.6%, and 1.05 is 50% up while
  // training fell from 0.6 to 0.25 (58.3%): it fires at step 69.
  const PairFed fed =
      feed_pair(*series_rule("OverfittingTrend"), {1.0, 0.8, 0.6, 0.5, 0.4, 0.3, 0.25},
                {1.0, 0.8, 0.7, 0.75, 0.85, 0.95, 1.05});
  EXPECT_THAT(fed.steps, ElementsAre(69));
  EXPECT_THAT(fed.last.message, HasSubstr("overfitting since step 29"));
  EXPECT_THAT(fed.last.message, HasSubstr("up 50% from its best 0.7"));
  EXPECT_THAT(fed.last.message, HasSubstr("train_loss_epoch fell 58.3%"));
}

TEST(OverfittingTrendRuleTest, ASmoothValidationLossNeedsLittleMoreThanTheFloor) {
  // Validation falls 1% an evaluation to its best 0.9 at step 49, then 0.91, 0.915, 0.935: the
  // median absolute log change of the seven changes is 0.01093, the rise needed
  // max(3%, exp(3 x 0.01093) - 1 = 3.33%); at step 79, the third value since the best, 0.935 is
  // 3.89% up while training still falls: it fires there.
  const PairFed fed =
      feed_pair(*series_rule("OverfittingTrend"), {1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2},
                {0.94, 0.93, 0.92, 0.91, 0.9, 0.91, 0.915, 0.935, 0.95});
  EXPECT_THAT(fed.steps, ElementsAre(79));
}

TEST(OverfittingTrendRuleTest, AValidationLossThatSitsAboveTrainingOrBumpsOnceIsQuiet) {
  // 15-20% above training throughout, and one bump that a new best ends.
  EXPECT_TRUE(feed_pair(*series_rule("OverfittingTrend"), {1.0, 0.8, 0.7, 0.65, 0.6, 0.55, 0.5},
                        {1.2, 0.95, 0.82, 0.9, 0.75, 0.68, 0.66})
                  .steps.empty());
}

TEST(OverfittingTrendRuleTest, BothLossesRisingIsNoOverfitting) {
  // Validation up from 0.7 while training rose too: divergence's business, not this rule's.
  EXPECT_TRUE(feed_pair(*series_rule("OverfittingTrend"), {1.0, 0.8, 0.6, 0.7, 0.8, 0.9},
                        {1.0, 0.8, 0.7, 0.8, 0.9, 1.0})
                  .steps.empty());
}

// --- Plateau ---------------------------------------------------------------------------------

TEST(PlateauRuleTest, ALearningRateHeldAtZeroFiresAtItsPatience) {
  // Five values of 0.1, then zeros from step 5: the 10th zero is step 14.
  const SeriesInfo lr = series("lr", SeriesRole::LearningRate, Mode::Global);
  const Fed fed = feed(*series_rule("Plateau"), lr, joined({repeated(0.1, 5), repeated(0.0, 20)}));
  EXPECT_THAT(fed.steps, ElementsAre(14));
  EXPECT_THAT(fed.last.message, HasSubstr("is 0 since step 5"));
  // A schedule that ends at 0 has one zero.
  EXPECT_TRUE(feed(*series_rule("Plateau"), lr, {0.1, 0.05, 0.01, 0.0}).steps.empty());
}

TEST(PlateauRuleTest, ALossThatRepeatsItselfExactlyFiresAtItsThirdRepeat) {
  // 0.7 first at step 3; steps 4, 5 and 6 repeat it: the third repeat is step 6.
  const Fed fed = feed(*series_rule("Plateau"), kLoss, {1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.7});
  EXPECT_THAT(fed.steps, ElementsAre(6));
  EXPECT_THAT(fed.last.message, HasSubstr("for 4 values (step 3 to 6)"));
}

TEST(PlateauRuleTest, ALossThatStillMovesOrHasConvergedToZeroIsQuiet) {
  EXPECT_TRUE(
      feed(*series_rule("Plateau"), kLoss, {1.0, 0.9, 0.89, 0.889, 0.8889, 0.88889}).steps.empty());
  EXPECT_TRUE(feed(*series_rule("Plateau"), kLoss, {1.0, 0.1, 0.0, 0.0, 0.0, 0.0}).steps.empty());
}

// A loss that learns fast and then, at once, barely moves: parameters that almost all stopped
// changing (every layer frozen but a bias). Falls of 30% to step 3 (0.343), then changes of
// 0.29%, 0.15% and 0.09%: each at most 1% and at least 20x smaller than 30% (1.5%). The third
// such change is step 6; the stall began at step 3.
TEST(PlateauRuleTest, ALossWhoseImprovementCollapsesAtOnceFiresAtItsPatience) {
  const Values loss{1.0, 0.7, 0.49, 0.343, 0.342, 0.3415, 0.3412, 0.341};
  const Fed fed = feed(*series_rule("Plateau"), kLoss, loss);
  EXPECT_THAT(fed.steps, ElementsAre(6));
  EXPECT_THAT(fed.last.message, HasSubstr("stopped improving at step 3"));
  EXPECT_THAT(fed.last.message, HasSubstr("it fell 30%"));
  // Learning fast again (a fall of 10%) clears it: the same collapse after it fires again,
  // three small changes later (steps 8 + 3 = 11).
  Values again = loss;
  for (const double value : {0.3069, 0.3068, 0.30675, 0.3067}) again.push_back(value);
  const Fed twice = feed(*series_rule("Plateau"), kLoss, again);
  EXPECT_THAT(twice.steps, ElementsAre(6, 11));
}

// What a healthy run's loss does: slow down gradually (each fall half the one before: never 20x
// at once), scatter by a few percent from batch to batch, or rise and settle (no fall before).
TEST(PlateauRuleTest, ALossThatSlowsGraduallyOrScattersIsQuiet) {
  Values gradual{1.0};
  double fall = 0.3;
  for (int i = 0; i < 12; ++i, fall /= 2) gradual.push_back(gradual.back() * (1.0 - fall));
  EXPECT_TRUE(feed(*series_rule("Plateau"), kLoss, gradual).steps.empty());
  EXPECT_TRUE(feed(*series_rule("Plateau"), kLoss, {1.0, 0.7, 0.72, 0.7, 0.72, 0.7, 0.72, 0.7})
                  .steps.empty());
  EXPECT_TRUE(
      feed(*series_rule("Plateau"), kLoss, {1.0, 1.3, 1.301, 1.302, 1.303, 1.304}).steps.empty());
  // A collapse of 10x only (a fall of 10%, then changes of 1%) is no stall at the default 20x.
  EXPECT_TRUE(
      feed(*series_rule("Plateau"), kLoss, {1.0, 0.9, 0.891, 0.882, 0.873, 0.864}).steps.empty());
}

// --- The default set -------------------------------------------------------------------------

TEST(DefaultRulesTest, EveryDefaultRuleIsBuiltInAndRunsOnLogdirs) {
  for (const std::string& name : default_rule_names()) {
    EXPECT_NE(RuleRegistry::builtin().create_series(name, {}), nullptr) << name;
  }
}

}  // namespace
}  // namespace rulestream
