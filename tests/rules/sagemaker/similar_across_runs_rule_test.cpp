// SimilarAcrossRuns between a base run and other runs given as other trials.
#include <gtest/gtest.h>

#include <limits>

#include "rules/rule.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/series_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::floats;
using testing::scalar;
using testing::SeriesStep;
using testing::Steps;
using testing::TempDir;

SeriesStep train(const std::vector<double>& weight, double loss) {
  return {Mode::Train,
          {{"fc.weight", floats(weight)}, {"CrossEntropyLoss_output_0", scalar(loss)}}};
}
SeriesStep eval(double loss) {
  return {Mode::Eval, {{"CrossEntropyLoss_output_0", scalar(loss)}}};
}

// The base run evaluates after its first TRAIN step (global steps: TRAIN 0, EVAL 0, TRAIN 1);
// the other runs after their second (TRAIN 0, TRAIN 1, EVAL 0). Steps line up by mode step.
// "same" matches the base within allclose's tolerance; "different" has a weight 0.1 away at
// TRAIN step 1 (the base's global step 2).
struct Runs {
  Trial base;
  Trial same;
  Trial different;
};

Runs write_runs(const TempDir& dir) {
  return {testing::write_job(dir.path() / "base",
                             {train({1, 2, 3, 4}, 1.0), eval(2.0), train({1, 2, 3, 4.5}, 0.9)}),
          testing::write_job(dir.path() / "same", {train({1, 2, 3, 4}, 1.0),
                                                   train({1, 2, 3, 4.5 + 1e-9}, 0.9), eval(2.0)}),
          testing::write_job(dir.path() / "different",
                             {train({1, 2, 3, 4}, 1.0), train({1, 2, 3, 4.6}, 0.9), eval(2.0)})};
}

// Runs that both went to NaN at the same element agree there (NaN is ExplodingTensor's to report);
// NaN against a number is a difference.
TEST(SimilarAcrossRunsRule, NaNInBothRunsIsAlikeAndNaNAgainstANumberIsNot) {
  TempDir dir;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Trial base = testing::write_job(dir.path() / "base", {train({1, nan}, 1.0)});
  const Trial alike = testing::write_job(dir.path() / "alike", {train({1, nan}, 1.0)});
  const Trial unlike = testing::write_job(dir.path() / "unlike", {train({1, 2}, 1.0)});
  EXPECT_EQ(testing::fired_steps("SimilarAcrossRuns", base, {}, {alike}), Steps{});
  EXPECT_EQ(testing::fired_steps("SimilarAcrossRuns", base, {}, {unlike}), Steps{0});
}

TEST(SimilarAcrossRunsRule, FiresAtTheStepWhereTheRunsDiffer) {
  TempDir dir;
  const Runs runs = write_runs(dir);
  EXPECT_EQ(testing::fired_steps("SimilarAcrossRuns", runs.base, {}, {runs.different}), Steps{2});
  EXPECT_EQ(testing::fired_steps("similar_across_runs", runs.base,
                                 {{"collection_names", "weights"}}, {runs.different}),
            Steps{2});
  // Chosen by name or by path among several other trials.
  EXPECT_EQ(testing::fired_steps("SimilarAcrossRuns", runs.base, {{"other_trial", "different"}},
                                 {runs.same, runs.different}),
            Steps{2});
  EXPECT_EQ(testing::fired_steps("SimilarAcrossRuns", runs.base,
                                 {{"other_trial", (dir.path() / "different").string()}},
                                 {runs.same, runs.different}),
            Steps{2});

  const auto rule = testing::make_rule("SimilarAcrossRuns", runs.base, {}, {runs.different});
  EXPECT_THROW(rule->invoke(2), RuleEvaluationConditionMet);
  const Finding& finding = rule->last_finding();
  EXPECT_EQ(finding.tensors, std::vector<std::string>{"fc.weight"});
  ASSERT_EQ(finding.figures.size(), 5u);
  EXPECT_EQ(finding.figures[0], (Figure{"differing", 1, "fc.weight"}));
  EXPECT_EQ(finding.figures[1], (Figure{"size", 4, "fc.weight"}));
  EXPECT_NEAR(finding.figures[2].value, 0.1, 1e-12);
  EXPECT_EQ(finding.message,
            "fc.weight differs from different in 1 of 4 values (largest difference 0.1, rtol "
            "1e-05, atol 1e-08)");
}

TEST(SimilarAcrossRunsRule, StaysQuietWhenTheRunsAgreeOrTheDifferenceIsNotSelected) {
  TempDir dir;
  const Runs runs = write_runs(dir);
  const auto rule = testing::make_rule("SimilarAcrossRuns", runs.base, {}, {runs.same});
  const InvokeResult result = invoke_rule(*rule);
  EXPECT_EQ(result.triggered_steps, Steps{});
  EXPECT_EQ(result.steps_evaluated, 3);
  EXPECT_EQ(testing::fired_steps("SimilarAcrossRuns", runs.base, {{"tensor_regex", "Loss"}},
                                 {runs.different}),
            Steps{});
  EXPECT_EQ(testing::fired_steps("SimilarAcrossRuns", runs.base, {{"other_trial", "same"}},
                                 {runs.same, runs.different}),
            Steps{});
}

// Tensors are matched by name, whatever else either run saved (each is matched through the
// other run's list of the step, in name order).
TEST(SimilarAcrossRunsRule, ComparesTheTensorsBothRunsSavedWhateverElseEachSaved) {
  TempDir dir;
  const auto step = [](double a_only, double fc_second, double z_only) {
    return SeriesStep{Mode::Train,
                      {{"a_only.weight", floats({a_only})},
                       {"fc.weight", floats({1, fc_second})},
                       {"z_only.weight", floats({z_only})}}};
  };
  const Trial base = testing::write_job(
      dir.path() / "base",
      {SeriesStep{Mode::Train, {{"a_only.weight", floats({1})}, {"fc.weight", floats({1, 2})}}}});
  const Trial alike = testing::write_job(
      dir.path() / "alike",
      {SeriesStep{Mode::Train, {{"fc.weight", floats({1, 2})}, {"z_only.weight", floats({9})}}}});
  const Trial unlike = testing::write_job(dir.path() / "unlike", {step(5, 3, 9)});
  const Trial nothing_shared = testing::write_job(
      dir.path() / "nothing_shared", {SeriesStep{Mode::Train, {{"b.weight", floats({1})}}}});
  EXPECT_EQ(testing::fired_steps("SimilarAcrossRuns", base, {}, {alike}), Steps{});
  const auto rule = testing::make_rule("SimilarAcrossRuns", base, {}, {unlike});
  EXPECT_THROW(rule->invoke(0), RuleEvaluationConditionMet);
  EXPECT_EQ(rule->last_finding().tensors, (std::vector<std::string>{"a_only.weight", "fc.weight"}));
  const auto apart = testing::make_rule("SimilarAcrossRuns", base, {}, {nothing_shared});
  EXPECT_THROW(apart->invoke(0), TensorUnavailableForStep) << "nothing to compare at the step";
}

TEST(SimilarAcrossRunsRule, ReportsAShapeThatDiffers) {
  TempDir dir;
  const Trial base = testing::write_job(dir.path() / "base", {train({1, 2, 3, 4}, 1.0)});
  const Trial other = testing::write_job(dir.path() / "other", {train({1, 2, 3}, 1.0)});
  const auto rule = testing::make_rule("SimilarAcrossRuns", base, {}, {other});
  EXPECT_THROW(rule->invoke(0), RuleEvaluationConditionMet);
  EXPECT_EQ(rule->last_finding().message, "fc.weight has shape (4,) but (3,) in other");
}

TEST(SimilarAcrossRunsRule, NeedsAnOtherTrialItCanName) {
  TempDir dir;
  const Runs runs = write_runs(dir);
  EXPECT_EQ(testing::config_error("SimilarAcrossRuns", runs.base, {}),
            "rule SimilarAcrossRuns: parameter other_trial: \"\" cannot be compared with: no "
            "other trial was given (add its PATH)");
  EXPECT_EQ(
      testing::config_error("SimilarAcrossRuns", runs.base, {{"other_trial", "nope"}}, {runs.same}),
      "rule SimilarAcrossRuns: parameter other_trial: \"nope\" is none of the other trials "
      "given: same (" +
          (dir.path() / "same").string() + ")");
  EXPECT_NE(testing::config_error("SimilarAcrossRuns", runs.base, {}, {runs.same, runs.different})
                .find("parameter other_trial: \"\" must name one of the other trials: same ("),
            std::string::npos);
  EXPECT_NE(
      testing::config_error("SimilarAcrossRuns", runs.base, {{"tensor_regex", "["}}, {runs.same})
          .find("parameter tensor_regex: \"[\" is not a valid regex"),
      std::string::npos);
}

}  // namespace
}  // namespace rulestream
