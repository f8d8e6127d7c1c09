// StepOutlier fed wall times by hand (its series form, what a TensorBoard logdir or a metrics
// file gives it) and run over smdebug jobs whose index files carry chosen modification times
// (its trial form). Every expected step, level and threshold is worked out in the comments.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "rules/series_rule.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::TempDir;
using Steps = std::vector<std::int64_t>;
using Times = std::vector<std::pair<std::int64_t, double>>;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// A run's first step, in seconds since 1970 (2023-11-14); sums of the durations below are exact
// at this size (multiples of 1/16 s).
constexpr double kBase = 1'700'000'000.0;

// Ten step durations with small jitter, in seconds, chosen to be exact in binary:
//   sorted 0.875 0.875 0.9375 1 1 1 1 1.0625 1.125 1.125 -> median (1 + 1) / 2 = 1
//   |d - 1|: 0 0.125 0.125 0 0.0625 0.0625 0 0.125 0.125 0
//   sorted 0 0 0 0 0.0625 0.0625 0.125 0.125 0.125 0.125 -> MAD (0.0625 + 0.0625) / 2 = 0.0625
//   spread = max(1.4826 x 0.0625, 5% of the median 1, 1 ms) = max(0.0926625, 0.05, 0.001)
//          = 0.0926625
//   threshold = 1 + 3 x 0.0926625 = 1.2779875 s
// After them (the warm-up of ten durations), a step is judged against that level.
const std::vector<double> kJitter = {1.0,    1.125, 0.875, 1.0,   1.0625,
                                     0.9375, 1.0,   1.125, 0.875, 1.0};
constexpr double kJitterSpread = 0.0926625;
constexpr double kJitterThreshold = 1.2779875;

std::vector<double> joined(std::vector<std::vector<double>> parts) {
  std::vector<double> all;
  for (const auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

// The wall times of steps 0, stride, 2 x stride, ...: each `durations[k]` per step after the one
// before (so a logged step `stride` steps on comes stride x durations[k] later).
Times wall_times(const std::vector<double>& durations, std::int64_t stride = 1) {
  Times times = {{0, kBase}};
  for (const double duration : durations) {
    const auto& [step, time] = times.back();
    times.emplace_back(step + stride, time + duration * static_cast<double>(stride));
  }
  return times;
}

std::shared_ptr<SeriesRule> series_rule(const RuleParameters& parameters = {}) {
  auto rule = RuleRegistry::builtin().create_series("StepOutlier", parameters);
  EXPECT_NE(rule, nullptr);
  return rule;
}

SeriesInfo wall_time_series(const std::string& run = "train", Mode mode = Mode::Global) {
  SeriesInfo info;
  info.run = run;
  info.figure = "wall_time";
  info.mode = mode;
  info.run_started = kBase;
  return info;
}

struct Fed {
  Steps fired;
  std::vector<Finding> findings;
  std::int64_t judged = 0;  // values the rule judged (not take_unjudged())
};

Fed feed(const SeriesRule& rule, const Times& times, const SeriesInfo& info = wall_time_series()) {
  const auto state = rule.start(info);
  Fed fed;
  for (const auto& [step, time] : times) {
    Finding finding;
    if (state->add(step, time, finding)) {
      fed.fired.push_back(step);
      fed.findings.push_back(finding);
    }
    if (!state->take_unjudged()) ++fed.judged;
  }
  return fed;
}

TEST(StepOutlierSeries, AStepTenTimesTheUsualFiresAtThatStep) {
  // Steps 1-10 take kJitter (the warm-up); step 11 takes 10 s > 1.2779875; then jitter again.
  const auto fed =
      feed(*series_rule({{"n_outliers", "0"}}), wall_times(joined({kJitter, {10.0}, kJitter})));
  EXPECT_EQ(fed.fired, Steps{11});
  ASSERT_EQ(fed.findings.size(), 1u);
  const Finding& finding = fed.findings.front();
  ASSERT_EQ(finding.figures.size(), 7u);
  EXPECT_EQ(finding.figures[0].name, "step_duration");
  EXPECT_EQ(finding.figures[0].value, 10.0);
  EXPECT_EQ(finding.figures[1].name, "median_step_duration");
  EXPECT_EQ(finding.figures[1].value, 1.0);
  EXPECT_EQ(finding.figures[2].name, "spread");
  EXPECT_NEAR(finding.figures[2].value, kJitterSpread, 1e-12);
  EXPECT_EQ(finding.figures[3].name, "threshold");
  EXPECT_NEAR(finding.figures[3].value, kJitterThreshold, 1e-12);
  EXPECT_EQ(finding.figures[4].name, "outliers");
  EXPECT_EQ(finding.figures[4].value, 1.0);
  EXPECT_EQ(finding.figures[5].name, "stddev");
  EXPECT_EQ(finding.figures[5].value, 3.0);
  EXPECT_EQ(finding.figures[6].name, "n_outliers");
  EXPECT_EQ(finding.figures[6].value, 0.0);
  EXPECT_EQ(finding.message,
            "step 11 of run train took 10 s, more than the threshold of 1.27799 s = median 1 s + "
            "stddev 3 x spread 0.0926625 s of the last 10 step durations; outlier 1, more than "
            "n_outliers 0");
  // Judged: every duration after the warm-up (steps 11-21); not step 0 (no duration yet) nor
  // steps 1-10 (the warm-up).
  EXPECT_EQ(fed.judged, 11);
}

TEST(StepOutlierSeries, TheFirstNOutliersAreIgnoredAndEveryLaterOneFires) {
  // After the warm-up (steps 1-10), 13 blocks of four jittered steps and a 10 s one: the slow
  // steps are 15, 20, ..., 75. Fewer than half the durations are below 1 s (3 of the first 10,
  // then 1 in 5) and fewer than half are slow, so the median stays in [1, 1.125] and the
  // threshold in [1.15, 2.24] (spread >= 5% of the median; MAD <= 0.25): every slow step is an
  // outlier, no jittered one (<= 1.125 s) is. With n_outliers 10 (the default) the 11th, 12th and
  // 13th outliers fire.
  std::vector<double> durations = kJitter;
  for (int block = 0; block < 13; ++block) {
    durations.insert(durations.end(), {1.0, 1.125, 0.875, 1.0, 10.0});
  }
  const auto fed = feed(*series_rule(), wall_times(durations));
  EXPECT_EQ(fed.fired, (Steps{65, 70, 75}));
  ASSERT_EQ(fed.findings.size(), 3u);
  EXPECT_EQ(fed.findings[0].figures[4].value, 11.0) << "the 11th outlier";
  EXPECT_NE(fed.findings[0].message.find("outlier 11, more than n_outliers 10"), std::string::npos)
      << fed.findings[0].message;

  const auto two = feed(*series_rule({{"n_outliers", "2"}}), wall_times(durations));
  EXPECT_EQ(two.fired.front(), 25) << "the third slow step (15, 20, 25)";
  EXPECT_EQ(two.fired.size(), 11u) << "the 3rd to the 13th";
}

TEST(StepOutlierSeries, SteadyStepsWithSmallJitterStayQuiet) {
  // 300 durations repeating kJitter: fewer than half are below 1 s and none above 1.125 s, so the
  // threshold is never below 1 + 3 x 5% = 1.15 s.
  std::vector<double> durations;
  for (int round = 0; round < 30; ++round)
    durations.insert(durations.end(), kJitter.begin(), kJitter.end());
  for (const char* n_outliers : {"10", "0"}) {
    const auto fed = feed(*series_rule({{"n_outliers", n_outliers}}), wall_times(durations));
    EXPECT_EQ(fed.fired, Steps{}) << n_outliers;
    EXPECT_EQ(fed.judged, 290) << "every duration after the ten of the warm-up";
  }
}

TEST(StepOutlierSeries, AStepStandsForTheStepsSinceTheOneBefore) {
  // Logged every 10 steps: the per-step durations are kJitter (steps 10-100 are the warm-up).
  // Step 110 comes 100 s after step 100: 10 s a step, above 1.2779875. Step 120 comes 12 s after
  // step 110: 1.2 s a step, below it.
  const auto fed =
      feed(*series_rule({{"n_outliers", "0"}}), wall_times(joined({kJitter, {10.0, 1.2}}), 10));
  EXPECT_EQ(fed.fired, Steps{110});
  ASSERT_EQ(fed.findings.size(), 1u);
  EXPECT_EQ(fed.findings[0].figures[0].value, 10.0);
  EXPECT_EQ(fed.findings[0].message,
            "steps 101-110 of run train took 10 s each (100 s after step 100), more than the "
            "threshold of 1.27799 s = median 1 s + stddev 3 x spread 0.0926625 s of the last 10 "
            "step durations; outlier 1, more than n_outliers 0");
}

TEST(StepOutlierSeries, StepsWithoutATimeAreSkippedNotJudged) {
  Times times = wall_times(kJitter);  // steps 0-10, step 10 at kBase + 10
  const double step10 = times.back().second;
  times.emplace_back(11, kNaN);                 // no time: not judged
  times.emplace_back(12, step10 + 2.0);         // 2 s after step 10: 1 s a step, quiet
  times.emplace_back(13, kNaN);                 // no time
  times.emplace_back(14, step10 + 2.0 + 20.0);  // 20 s after step 12: 10 s a step, fires
  const auto fed = feed(*series_rule({{"n_outliers", "0"}}), times);
  EXPECT_EQ(fed.fired, Steps{14});
  EXPECT_EQ(fed.judged, 2) << "steps 12 and 14; the NaN times and the warm-up are not judged";
  EXPECT_NE(fed.findings[0].message.find("steps 13-14 of run train took 10 s each (20 s after "
                                         "step 12)"),
            std::string::npos)
      << fed.findings[0].message;

  // A run none of whose steps has a time (a CSV without a time column) judges nothing: the
  // pipeline then says NotApplicable, not NoIssuesFound.
  Times untimed;
  for (std::int64_t step = 0; step < 50; ++step) untimed.emplace_back(step, kNaN);
  const auto none = feed(*series_rule({{"n_outliers", "0"}}), untimed);
  EXPECT_EQ(none.fired, Steps{});
  EXPECT_EQ(none.judged, 0);
}

TEST(StepOutlierSeries, AClockThatGoesBackIsNoDuration) {
  Times times = wall_times(kJitter);
  const double step10 = times.back().second;
  times.emplace_back(11, step10 - 5.0);  // earlier than step 10: not judged
  times.emplace_back(12, step10 - 4.0);  // 1 s after step 11: judged, quiet
  const auto fed = feed(*series_rule({{"n_outliers", "0"}}), times);
  EXPECT_EQ(fed.fired, Steps{});
  EXPECT_EQ(fed.judged, 1);
}

TEST(StepOutlierSeries, StddevSetsHowFarAboveTheUsualAStepMustBe) {
  // stddev 10: threshold = 1 + 10 x 0.0926625 = 1.926625 s. A 1.875 s step is below it, a 2 s
  // step above; with the default 3 (threshold 1.2779875) the 1.875 s step fires too.
  const auto slow = [](double seconds) { return wall_times(joined({kJitter, {seconds}})); };
  const auto ten = series_rule({{"stddev", "10"}, {"n_outliers", "0"}});
  EXPECT_EQ(feed(*ten, slow(1.875)).fired, Steps{});
  const auto fired = feed(*ten, slow(2.0));
  EXPECT_EQ(fired.fired, Steps{11});
  EXPECT_NEAR(fired.findings[0].figures[3].value, 1.926625, 1e-12);
  EXPECT_EQ(feed(*series_rule({{"n_outliers", "0"}}), slow(1.875)).fired, Steps{11});
}

TEST(StepOutlierSeries, ASpreadOfAtLeastFivePercentOfTheMedianAndAMillisecond) {
  // Steps timed alike to the microsecond (every duration 2 s): MAD 0, so the spread is 5% of the
  // median, 0.1 s (more than 1 ms), and the threshold 2 + 3 x 0.1 = 2.3 s. 2.25 s is no outlier;
  // 2.5 s is.
  const std::vector<double> steady(10, 2.0);
  const auto rule = series_rule({{"n_outliers", "0"}});
  EXPECT_EQ(feed(*rule, wall_times(joined({steady, {2.25}}))).fired, Steps{});
  const auto fed = feed(*rule, wall_times(joined({steady, {2.5}})));
  EXPECT_EQ(fed.fired, Steps{11});
  EXPECT_NEAR(fed.findings[0].figures[2].value, 0.1, 1e-12);
  EXPECT_NEAR(fed.findings[0].figures[3].value, 2.3, 1e-12);

  // And at least a millisecond: files copied in a burst are 1/1024 s apart (about 1 ms), MAD 0,
  // 5% of the median is 0.05 ms, so the spread is 1 ms and the threshold 1/1024 + 3 x 0.001 =
  // 0.0039765625 s. A 3.5 ms gap is no outlier; 4.5 ms is.
  const std::vector<double> burst(10, 1.0 / 1024);
  EXPECT_EQ(feed(*rule, wall_times(joined({burst, {0.0035}}))).fired, Steps{});
  const auto slow = feed(*rule, wall_times(joined({burst, {0.0045}})));
  EXPECT_EQ(slow.fired, Steps{11});
  EXPECT_NEAR(slow.findings[0].figures[2].value, 0.001, 1e-12);
  EXPECT_NEAR(slow.findings[0].figures[3].value, 0.0039765625, 1e-12);
}

TEST(StepOutlierSeries, WatchesTheWallTimesOfRunsOfItsMode) {
  const auto every = series_rule();
  EXPECT_TRUE(every->watches(wall_time_series("train", Mode::Global)));
  EXPECT_TRUE(every->watches(wall_time_series("eval", Mode::Eval)));
  SeriesInfo loss = wall_time_series();
  loss.figure.clear();
  loss.tag = "loss";
  EXPECT_FALSE(every->watches(loss));
  EXPECT_EQ(every->silence_threshold(), std::nullopt);

  const auto train = series_rule({{"mode", "TRAIN"}});
  EXPECT_TRUE(train->watches(wall_time_series("train", Mode::Train)));
  EXPECT_FALSE(train->watches(wall_time_series(".", Mode::Global)))
      << "a run's wall times carry no mode";
  EXPECT_EQ(train->looks_for(), "the wall times of TRAIN steps");
  EXPECT_EQ(series_rule({{"mode", "None"}})->looks_for(), "the wall times of steps");
}

TEST(StepOutlierSeries, TheLevelFollowsTheLastHundredDurations) {
  // 100 durations of 1 s (steps 1-100), then 100 of 2 s (steps 101-200). Step 100 + k is judged
  // against the 100 durations before it: 101 - k ones and k - 1 twos.
  //   k <= 50: at least 51 ones: median 1, MAD 0, spread 5% = 0.05, threshold 1.15 < 2: fires.
  //   k = 51: 50 and 50: median (1 + 2) / 2 = 1.5, every deviation 0.5: MAD 0.5, spread
  //     1.4826 x 0.5 = 0.7413, threshold 1.5 + 3 x 0.7413 = 3.7239 > 2: quiet.
  //   k > 51: more twos than ones: median 2: quiet.
  // A run that slows down for good fires until its new pace is half the window, then adapts.
  const std::vector<double> ones(100, 1.0);
  const std::vector<double> twos(100, 2.0);
  const auto fed = feed(*series_rule({{"n_outliers", "0"}}), wall_times(joined({ones, twos})));
  Steps expected;
  for (std::int64_t step = 101; step <= 150; ++step) expected.push_back(step);
  EXPECT_EQ(fed.fired, expected);
}

TEST(StepOutlierSeries, BadParametersAreNamed) {
  const auto error = [](const RuleParameters& parameters) {
    return testing::config_error("StepOutlier", parameters);
  };
  EXPECT_EQ(error({{"stddev", "abc"}}),
            "rule StepOutlier: parameter stddev: \"abc\" is not a number");
  EXPECT_EQ(error({{"stddev", "0"}}),
            "rule StepOutlier: parameter stddev: \"0\" is not a positive number");
  EXPECT_EQ(error({{"n_outliers", "-1"}}),
            "rule StepOutlier: parameter n_outliers: \"-1\" is not a count (0 or more)");
  EXPECT_EQ(error({{"n_outliers", "2.5"}}),
            "rule StepOutlier: parameter n_outliers: \"2.5\" is not an integer");
  EXPECT_EQ(error({{"mode", "TRAINING"}}),
            "rule StepOutlier: parameter mode: \"TRAINING\" is not a mode (None, TRAIN, EVAL, "
            "PREDICT or GLOBAL)");
  EXPECT_EQ(error({{"scan_interval_us", "0"}}),
            "rule StepOutlier: parameter scan_interval_us: \"0\" is not a positive number of "
            "microseconds");
  EXPECT_EQ(error({{"threshold", "3"}}),
            "rule StepOutlier: unknown parameter \"threshold\" (known: stddev, mode, n_outliers, "
            "scan_interval_us)");
  EXPECT_EQ(error({{"stddev", "2.5"},
                   {"mode", "eval"},
                   {"n_outliers", "0"},
                   {"scan_interval_us", "1000000"}}),
            "");
  // The series form reads them the same way.
  try {
    RuleRegistry::builtin().create_series("StepOutlier", {{"stddev", "-3"}});
    ADD_FAILURE() << "a negative stddev was accepted";
  } catch (const RuleConfigError& rejected) {
    EXPECT_EQ(std::string(rejected.what()),
              "rule StepOutlier: parameter stddev: \"-3\" is not a positive number");
  }
}

TEST(StepOutlierSeries, IsListedWithSageMakersParametersAndDefaults) {
  const RuleSpec* spec = RuleRegistry::builtin().find("step_outlier");
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->name, "StepOutlier");
  std::vector<std::vector<std::string>> rows;
  for (const auto& parameter : spec->parameters) {
    rows.push_back({parameter.name, parameter.type, parameter.default_value});
  }
  EXPECT_EQ(rows, (std::vector<std::vector<std::string>>{{"stddev", "float", "3"},
                                                         {"mode", "string", "None"},
                                                         {"n_outliers", "int", "10"},
                                                         {"scan_interval_us", "int", "60000000"}}));
}

// --- the trial form: smdebug jobs whose steps arrived at chosen times ---------------------------

// 2024-01-01T00:00:00Z: the job's first step.
const std::chrono::system_clock::time_point kStart{std::chrono::seconds(1'704'067'200)};

// Ten gaps of whole seconds around 10 s (file times are stamped to the second):
//   sorted 9 9 10 10 10 10 10 10 11 11 -> median 10; |d - 10|: four 1s, six 0s -> MAD 0
//   spread = max(1.4826 x 0, 5% of 10, 1 ms) = 0.5; threshold = 10 + 3 x 0.5 = 11.5 s
const std::vector<std::int64_t> kGaps = {10, 11, 9, 10, 10, 10, 11, 9, 10, 10};

// Index-file times (seconds after kStart) of steps 0, 1, ...: each `gaps[k]` after the one before.
std::vector<std::int64_t> offsets_of(const std::vector<std::int64_t>& gaps) {
  std::vector<std::int64_t> offsets = {0};
  for (const std::int64_t gap : gaps) offsets.push_back(offsets.back() + gap);
  return offsets;
}

// A one-worker job of `modes.size()` steps (step s of mode modes[s]) whose index files were
// modified at kStart + offsets[s].
Trial job_with_times(const TempDir& dir, const std::vector<std::int64_t>& offsets,
                     const std::vector<Mode>& modes = {}) {
  std::vector<testing::JobStep> steps;
  for (std::size_t s = 0; s < offsets.size(); ++s) {
    steps.push_back({.step = static_cast<std::int64_t>(s),
                     .mode = modes.empty() ? Mode::Train : modes[s],
                     .tensors = {{"loss", testing::float_tensor({}, {1.0f})}}});
  }
  testing::write_job(dir.path(), steps, {testing::collection("losses", {"^loss$"})});
  testing::stamp_index_files(dir.path(), kStart, offsets);
  return Trial::open(dir.path().string(), {.end_of_job_grace = std::chrono::milliseconds(0)});
}

std::vector<std::int64_t> joined_gaps(std::vector<std::vector<std::int64_t>> parts) {
  std::vector<std::int64_t> all;
  for (const auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

TEST(StepOutlierTrial, FiresAtTheStepThatArrivedLongAfterTheOneBefore) {
  TempDir dir;
  // Steps 1-10 arrive kGaps apart (the warm-up), step 11 100 s after step 10 (> 11.5), then kGaps.
  const Trial trial = job_with_times(dir, offsets_of(joined_gaps({kGaps, {100}, kGaps})));
  const auto rule = testing::make_rule("StepOutlier", trial, {{"n_outliers", "0"}});
  const InvokeResult result = invoke_rule(*rule);
  EXPECT_EQ(result.triggered_steps, Steps{11});
  EXPECT_EQ(result.steps_evaluated, 11) << "steps 11-21; step 0 and the warm-up are skipped";
  EXPECT_EQ(testing::fired_steps("StepOutlier", trial), Steps{}) << "one outlier, n_outliers 10";

  const Finding finding = testing::finding_at("StepOutlier", trial, 11, {{"n_outliers", "0"}});
  EXPECT_EQ(finding.message,
            "step 11 (TRAIN) took 100 s, more than the threshold of 11.5 s = median 10 s + stddev "
            "3 x spread 0.5 s of the last 10 step durations; outlier 1, more than n_outliers 0");
  EXPECT_EQ(finding.figures[0], (Figure{"step_duration", 100.0, std::nullopt}));
  EXPECT_EQ(finding.figures[3], (Figure{"threshold", 11.5, std::nullopt}));
  EXPECT_TRUE(rule->required_tensors().nothing);
  EXPECT_FALSE(rule->required_tensors().values);
}

TEST(StepOutlierTrial, EachModeIsJudgedOnItsOwnAndTheSwitchIsNoDuration) {
  TempDir dir;
  // TRAIN 0-14, EVAL 15-19, TRAIN 20-29; the steps of a mode arrive kGaps apart, and each switch
  // of mode takes 200 s (setting up an evaluation, and back).
  std::vector<Mode> modes;
  for (int s = 0; s < 30; ++s) modes.push_back(s >= 15 && s < 20 ? Mode::Eval : Mode::Train);
  const auto gaps = joined_gaps(
      {kGaps, {10, 11, 9, 10}, {200}, {10, 10, 10, 10}, {200}, {10, 11, 9, 10, 10, 10, 11, 9, 10}});
  const Trial trial = job_with_times(dir, offsets_of(gaps), modes);
  const auto all_modes = testing::make_rule("StepOutlier", trial, {{"n_outliers", "0"}});
  const InvokeResult result = invoke_rule(*all_modes);
  EXPECT_EQ(result.triggered_steps, Steps{}) << "the 200 s around the pass belong to no mode";
  // Judged: TRAIN 11-14 (after the ten durations of steps 1-10), TRAIN 21-29 (step 20 starts a
  // new sequence; the TRAIN level already has 14 durations); EVAL's 4 durations are a warm-up.
  EXPECT_EQ(result.steps_evaluated, 4 + 9);

  const auto eval = testing::make_rule("StepOutlier", trial, {{"mode", "EVAL"}});
  EXPECT_EQ(invoke_rule(*eval).steps_evaluated, 0);
  const auto train = testing::make_rule("StepOutlier", trial, {{"mode", "TRAIN"}});
  EXPECT_EQ(invoke_rule(*train).steps_evaluated, 13);

  // The same 200 s between two TRAIN steps (after step 12) is an outlier.
  TempDir other;
  const Trial slow = job_with_times(other, offsets_of(joined_gaps({kGaps, {10, 10, 200, 10}})));
  EXPECT_EQ(testing::fired_steps("StepOutlier", slow, {{"n_outliers", "0"}}), Steps{13});
}

TEST(StepOutlierTrial, SteadyArrivalsStayQuiet) {
  TempDir dir;
  std::vector<std::int64_t> gaps;
  for (int round = 0; round < 5; ++round) gaps.insert(gaps.end(), kGaps.begin(), kGaps.end());
  const Trial trial = job_with_times(dir, offsets_of(gaps));
  const auto rule = testing::make_rule("StepOutlier", trial, {{"n_outliers", "0"}});
  const InvokeResult result = invoke_rule(*rule);
  EXPECT_EQ(result.triggered_steps, Steps{}) << "11 s a step is below 11.5";
  EXPECT_EQ(result.steps_evaluated, 40);
}

}  // namespace
}  // namespace rulestream
