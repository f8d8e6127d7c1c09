// StalledTrainingRule on jobs whose index files carry chosen modification times (a replay sees a
// stall from them), and its clock check (what a live pipeline calls on a timer).
#include "rules/sagemaker/stalled_training_rule.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "core/model/exceptions.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::float_tensor;
using testing::TempDir;
using Steps = std::vector<std::int64_t>;
using std::chrono::seconds;
using TimePoint = std::chrono::system_clock::time_point;

// 2024-01-01T00:00:00Z: the job's first step.
const TimePoint kStart{seconds(1'704'067'200)};

// Writes a one-worker job whose step s's index file was modified at kStart plus `offsets[s]`
// seconds, and opens it (the listing reads the times).
Trial job_with_times(const TempDir& dir, const std::vector<std::int64_t>& offsets) {
  std::vector<testing::JobStep> steps;
  for (std::size_t s = 0; s < offsets.size(); ++s) {
    steps.push_back(
        {.step = static_cast<std::int64_t>(s), .tensors = {{"loss", float_tensor({}, {1.0f})}}});
  }
  testing::write_job(dir.path(), steps, {testing::collection("losses", {"^loss$"})});
  testing::stamp_index_files(dir.path(), kStart, offsets);
  return Trial::open(dir.path().string(), {.end_of_job_grace = std::chrono::milliseconds(0)});
}

// Ten seconds a step, with `gap` seconds more before step `after_gap`.
std::vector<std::int64_t> steady_with_gap(std::int64_t count, std::int64_t after_gap,
                                          std::int64_t gap) {
  std::vector<std::int64_t> offsets;
  for (std::int64_t s = 0; s < count; ++s) offsets.push_back(10 * s + (s >= after_gap ? gap : 0));
  return offsets;
}

std::unique_ptr<StalledTrainingRule> stalled_rule(const Trial& trial,
                                                  const RuleParameters& parameters) {
  auto rule = testing::make_rule("StalledTrainingRule", trial, parameters);
  return std::unique_ptr<StalledTrainingRule>(dynamic_cast<StalledTrainingRule*>(rule.release()));
}

TEST(StalledTrainingRule, TheTrialKnowsWhenEachStepArrived) {
  TempDir dir;
  const Trial trial = job_with_times(dir, {0, 10, 25});
  EXPECT_EQ(trial.step_arrival(0), kStart);
  EXPECT_EQ(trial.step_arrival(2), kStart + seconds(25));
  EXPECT_EQ(trial.step_arrival(3), std::nullopt);
}

TEST(StalledTrainingRule, ReplayFiresAtTheStepAfterTheGap) {
  TempDir dir;
  // Step 5 arrives 210 s after step 4; every other step 10 s after the one before.
  const Trial trial = job_with_times(dir, steady_with_gap(8, 5, 200));
  EXPECT_EQ(testing::fired_steps("StalledTrainingRule", trial, {{"threshold", "100"}}), Steps{5});
  EXPECT_EQ(testing::fired_steps("stalled_training_rule", trial, {{"threshold", "209"}}), Steps{5});
  EXPECT_EQ(testing::fired_steps("StalledTrainingRule", trial, {{"threshold", "210"}}), Steps{})
      << "a gap of exactly the threshold is not more than it";
  EXPECT_EQ(testing::fired_steps("StalledTrainingRule", trial), Steps{}) << "1800 s by default";

  const Finding finding =
      testing::finding_at("StalledTrainingRule", trial, 5,
                          {{"threshold", "100"}, {"training_job_name_prefix", "mnist-2024"}});
  EXPECT_EQ(finding.figures, (std::vector<Figure>{{"last_step", 4.0, std::nullopt},
                                                  {"seconds_without_step", 210.0, std::nullopt},
                                                  {"threshold", 100.0, std::nullopt}}));
  EXPECT_EQ(finding.message,
            "training stalled: step 5 arrived 210 s after step 4 > threshold 100 s (training job "
            "mnist-2024*)");
  EXPECT_EQ(finding.step, std::nullopt) << "the finding is about the step invoked";
}

TEST(StalledTrainingRule, TheDefaultThresholdIsHalfAnHour) {
  TempDir dir;
  const Trial trial = job_with_times(dir, steady_with_gap(4, 2, 1801));
  EXPECT_EQ(testing::fired_steps("StalledTrainingRule", trial), Steps{2});
}

TEST(StalledTrainingRule, NoGapStaysQuiet) {
  TempDir dir;
  const Trial trial = job_with_times(dir, steady_with_gap(12, 0, 0));
  EXPECT_EQ(testing::fired_steps("StalledTrainingRule", trial, {{"threshold", "11"}}), Steps{});
  // Every gap is 10 s: a threshold below it fires at every step but the first.
  EXPECT_EQ(testing::fired_steps("StalledTrainingRule", trial, {{"threshold", "9"}}).size(), 11u);
}

TEST(StalledTrainingRule, TheClockFiresOncePerStallAndTheNextStepRearmsIt) {
  TempDir dir;
  const Trial trial = job_with_times(dir, {0, 10, 20, 30, 500, 510});
  const auto rule = stalled_rule(trial, {{"threshold", "100"}});
  EXPECT_EQ(rule->check_interval(), std::chrono::milliseconds(1000));
  for (std::int64_t step = 0; step <= 3; ++step) EXPECT_NO_THROW(rule->invoke(step));

  EXPECT_FALSE(rule->invoke_at(kStart + seconds(130))) << "100 s after step 3: not more";
  ASSERT_TRUE(rule->invoke_at(kStart + seconds(131)));
  const Finding& finding = rule->last_finding();
  EXPECT_EQ(finding.step, 3);
  EXPECT_EQ(finding.figures, (std::vector<Figure>{{"last_step", 3.0, std::nullopt},
                                                  {"seconds_without_step", 101.0, std::nullopt},
                                                  {"threshold", 100.0, std::nullopt}}));
  EXPECT_EQ(finding.message,
            "training stalled: no new step for 101 s since step 3 > threshold 100 s");
  EXPECT_FALSE(rule->invoke_at(kStart + seconds(400))) << "the same stall, already reported";

  // Step 4 ends the stall the clock reported: no second event for it.
  EXPECT_NO_THROW(rule->invoke(4));
  EXPECT_FALSE(rule->invoke_at(kStart + seconds(600)));
  EXPECT_TRUE(rule->invoke_at(kStart + seconds(601))) << "a new stall after step 4";
  EXPECT_EQ(rule->last_finding().step, 4);
}

TEST(StalledTrainingRule, TheClockFiresWhenNoStepEverArrives) {
  TempDir dir;
  const Trial trial = job_with_times(dir, {0});
  const auto rule = stalled_rule(trial, {{"threshold", "60"}});
  const auto now = std::chrono::system_clock::now();
  EXPECT_FALSE(rule->invoke_at(now + seconds(30)));
  ASSERT_TRUE(rule->invoke_at(now + seconds(120)));
  EXPECT_EQ(rule->last_finding().step, std::nullopt);
  EXPECT_NE(rule->last_finding().message.find("no step at all"), std::string::npos)
      << rule->last_finding().message;
}

TEST(StalledTrainingRule, CheckIntervalIsATenthOfTheThresholdWithinLimits) {
  TempDir dir;
  const Trial trial = job_with_times(dir, {0});
  using std::chrono::milliseconds;
  EXPECT_EQ(stalled_rule(trial, {{"threshold", "1"}})->check_interval(), milliseconds(100));
  EXPECT_EQ(stalled_rule(trial, {{"threshold", "5"}})->check_interval(), milliseconds(500));
  EXPECT_EQ(stalled_rule(trial, {})->check_interval(), milliseconds(1000));
}

TEST(StalledTrainingRule, ReadsNoTensorsAndSaysWhetherItStopsTraining) {
  TempDir dir;
  const Trial trial = job_with_times(dir, {0});
  const auto quiet = stalled_rule(trial, {});
  EXPECT_TRUE(quiet->required_tensors().nothing);
  EXPECT_FALSE(quiet->required_tensors().values);
  EXPECT_FALSE(quiet->stops_training_on_fire());
  EXPECT_TRUE(stalled_rule(trial, {{"stop_training_on_fire", "True"}})->stops_training_on_fire());
  EXPECT_EQ(stalled_rule(trial, {{"training_job_name_prefix", "job-a"}})
                ->options()
                .training_job_name_prefix,
            "job-a");
}

TEST(StalledTrainingRule, BadParametersAreNamed) {
  EXPECT_EQ(testing::config_error("StalledTrainingRule", {{"threshold", "abc"}}),
            "rule StalledTrainingRule: parameter threshold: \"abc\" is not an integer");
  EXPECT_EQ(testing::config_error("StalledTrainingRule", {{"threshold", "1.5"}}),
            "rule StalledTrainingRule: parameter threshold: \"1.5\" is not an integer");
  EXPECT_EQ(testing::config_error("StalledTrainingRule", {{"threshold", "0"}}),
            "rule StalledTrainingRule: parameter threshold: \"0\" is not a positive number of "
            "seconds");
  EXPECT_EQ(testing::config_error("StalledTrainingRule", {{"threshold", "-30"}}),
            "rule StalledTrainingRule: parameter threshold: \"-30\" is not a positive number of "
            "seconds");
  EXPECT_EQ(testing::config_error("StalledTrainingRule", {{"stop_training_on_fire", "yes"}}),
            "rule StalledTrainingRule: parameter stop_training_on_fire: \"yes\" is not a boolean "
            "(True, False, 1 or 0)");
  EXPECT_EQ(testing::config_error("StalledTrainingRule", {{"treshold", "60"}}),
            "rule StalledTrainingRule: unknown parameter \"treshold\" (known: threshold, "
            "stop_training_on_fire, training_job_name_prefix)");
  EXPECT_EQ(testing::config_error("StalledTrainingRule",
                                  {{"threshold", "60"}, {"stop_training_on_fire", "False"}}),
            "");
}

}  // namespace
}  // namespace rulestream
