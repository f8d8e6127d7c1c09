// MaxInitializationTime fed a run's wall times and start by hand (its series form, what a
// TensorBoard logdir or a metrics file gives it), asked about a watch's silence, and run over
// smdebug jobs whose index files carry chosen modification times (its trial form).
#include "rules/sagemaker/max_initialization_time_rule.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "rules/rule_registry.hpp"
#include "rules/series_rule.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::TempDir;
using Steps = std::vector<std::int64_t>;
using Times = std::vector<std::pair<std::int64_t, double>>;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// When the run started (its first record), in seconds since 1970.
constexpr double kStarted = 1'700'000'000.0;

std::shared_ptr<SeriesRule> series_rule(const RuleParameters& parameters = {}) {
  auto rule = RuleRegistry::builtin().create_series("MaxInitializationTime", parameters);
  EXPECT_NE(rule, nullptr);
  return rule;
}

SeriesInfo wall_time_series(std::optional<double> run_started = kStarted) {
  SeriesInfo info;
  info.run = "train";
  info.figure = "wall_time";
  info.run_started = run_started;
  return info;
}

struct Fed {
  Steps fired;
  std::vector<Finding> findings;
  std::int64_t judged = 0;  // values the rule judged (not take_unjudged())
};

Fed feed(const SeriesRule& rule, const SeriesInfo& info, const Times& times) {
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

TEST(MaxInitializationTimeSeries, FiresWhenTheFirstStepCameLaterThanTheThreshold) {
  // The first step (step 0) 25 min (1500 s) after the run started: more than 20 min (1200 s).
  // The steps after it are not judged, however far apart.
  const auto fed = feed(*series_rule(), wall_time_series(),
                        {{0, kStarted + 1500.0}, {1, kStarted + 1501.0}, {2, kStarted + 9000.0}});
  EXPECT_EQ(fed.fired, Steps{0});
  EXPECT_EQ(fed.judged, 1);
  ASSERT_EQ(fed.findings.size(), 1u);
  EXPECT_EQ(fed.findings[0].figures,
            (std::vector<Figure>{{"first_step", 0.0, std::nullopt},
                                 {"initialization_minutes", 25.0, std::nullopt},
                                 {"threshold", 20.0, std::nullopt}}));
  EXPECT_EQ(fed.findings[0].message,
            "initialization took too long: the first step of run train (step 0) came 25 min "
            "after the run started, more than the threshold of 20 min");
}

TEST(MaxInitializationTimeSeries, AFirstStepWithinTheThresholdIsQuietAndJudged) {
  // 19.5 min (1170 s), and exactly 20 min (1200 s: not more than the threshold).
  for (const double after : {1170.0, 1200.0}) {
    const auto fed = feed(*series_rule(), wall_time_series(),
                          {{5, kStarted + after}, {6, kStarted + after + 4000.0}});
    EXPECT_EQ(fed.fired, Steps{}) << after;
    EXPECT_EQ(fed.judged, 1) << "the first step only";
  }
}

TEST(MaxInitializationTimeSeries, ThresholdIsInMinutes) {
  // threshold 0.5: 30 s. The first step 31 s after the start fires, 30 s after does not.
  const auto half = series_rule({{"threshold", "0.5"}});
  EXPECT_EQ(feed(*half, wall_time_series(), {{0, kStarted + 31.0}}).fired, Steps{0});
  EXPECT_EQ(feed(*half, wall_time_series(), {{0, kStarted + 30.0}}).fired, Steps{});
  // A metrics file's elapsed-time column starts at 0: its first step at 90 s is 1.5 min in.
  const auto one = series_rule({{"threshold", "1"}});
  const auto fed = feed(*one, wall_time_series(0.0), {{1, 90.0}});
  EXPECT_EQ(fed.fired, Steps{1});
  EXPECT_EQ(fed.findings[0].figures[1].value, 1.5);
}

TEST(MaxInitializationTimeSeries, WithoutAStartOrAFirstTimeNothingIsJudged) {
  // No start known (a format that does not say): no step is judged, however late.
  const auto unknown = feed(*series_rule(), wall_time_series(std::nullopt),
                            {{0, kStarted + 1e6}, {1, kStarted + 1e6 + 1.0}});
  EXPECT_EQ(unknown.fired, Steps{});
  EXPECT_EQ(unknown.judged, 0) << "the pipeline then says NotApplicable, not NoIssuesFound";
  // The first step has no time (a CSV row without one): it is not judged, and a later step with
  // a time is not the first step, so it is not judged either.
  const auto untimed =
      feed(*series_rule(), wall_time_series(), {{0, kNaN}, {1, kStarted + 5000.0}});
  EXPECT_EQ(untimed.fired, Steps{});
  EXPECT_EQ(untimed.judged, 0);
}

TEST(MaxInitializationTimeSeries, AWatchFiresWhenNoStepCameWithinTheThreshold) {
  EXPECT_EQ(series_rule()->silence_threshold(), seconds(1200));
  EXPECT_EQ(series_rule({{"threshold", "0.5"}})->silence_threshold(), seconds(30));
  EXPECT_EQ(series_rule({{"threshold", "0.01"}})->silence_threshold(), seconds(1))
      << "0.6 s, counted in whole seconds";

  const auto rule = series_rule();
  const Finding silent = rule->silence(std::nullopt, 1260.0, "/logs/job");
  EXPECT_EQ(silent.figures, (std::vector<Figure>{{"initialization_minutes", 21.0, std::nullopt},
                                                 {"threshold", 20.0, std::nullopt}}));
  EXPECT_EQ(silent.message,
            "initialization took too long: no step at all in /logs/job in the 21 min since the "
            "watch began, more than the threshold of 20 min");
  // Once a step has come, initialization is over: a silence is StalledTrainingRule's.
  const Finding later = rule->silence(std::int64_t{40}, 5000.0, "/logs/job");
  EXPECT_TRUE(later.message.empty());
  EXPECT_TRUE(later.figures.empty());
}

TEST(MaxInitializationTimeSeries, WatchesEveryRunsWallTimes) {
  const auto rule = series_rule();
  EXPECT_TRUE(rule->watches(wall_time_series()));
  SeriesInfo loss = wall_time_series();
  loss.figure.clear();
  loss.tag = "loss";
  EXPECT_FALSE(rule->watches(loss));
}

TEST(MaxInitializationTimeSeries, BadParametersAreNamed) {
  const auto error = [](const RuleParameters& parameters) {
    return testing::config_error("MaxInitializationTime", parameters);
  };
  EXPECT_EQ(error({{"threshold", "abc"}}),
            "rule MaxInitializationTime: parameter threshold: \"abc\" is not a number");
  EXPECT_EQ(error({{"threshold", "0"}}),
            "rule MaxInitializationTime: parameter threshold: \"0\" is not a positive number of "
            "minutes");
  EXPECT_EQ(error({{"threshold", "-20"}}),
            "rule MaxInitializationTime: parameter threshold: \"-20\" is not a positive number of "
            "minutes");
  EXPECT_EQ(error({{"threshold", "1e12"}}),
            "rule MaxInitializationTime: parameter threshold: \"1e12\" is out of range");
  EXPECT_EQ(error({{"scan_interval_us", "-1"}}),
            "rule MaxInitializationTime: parameter scan_interval_us: \"-1\" is not a positive "
            "number of microseconds");
  EXPECT_EQ(error({{"treshold", "20"}}),
            "rule MaxInitializationTime: unknown parameter \"treshold\" (known: threshold, "
            "scan_interval_us)");
  EXPECT_EQ(error({{"threshold", "45"}, {"scan_interval_us", "60000000"}}), "");
  try {
    RuleRegistry::builtin().create_series("MaxInitializationTime", {{"threshold", "0"}});
    ADD_FAILURE() << "a threshold of 0 was accepted";
  } catch (const RuleConfigError& rejected) {
    EXPECT_EQ(std::string(rejected.what()),
              "rule MaxInitializationTime: parameter threshold: \"0\" is not a positive number of "
              "minutes");
  }
}

TEST(MaxInitializationTimeSeries, IsListedWithSageMakersParametersAndDefaults) {
  const RuleSpec* spec = RuleRegistry::builtin().find("max_initialization_time");
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->name, "MaxInitializationTime");
  std::vector<std::vector<std::string>> rows;
  for (const auto& parameter : spec->parameters) {
    rows.push_back({parameter.name, parameter.type, parameter.default_value});
  }
  EXPECT_EQ(rows, (std::vector<std::vector<std::string>>{{"threshold", "float", "20"},
                                                         {"scan_interval_us", "int", "60000000"}}));
}

// --- the trial form -----------------------------------------------------------------------------

// A one-worker job of `offsets.size()` steps whose index files were modified at start +
// offsets[s] seconds.
Trial job_with_times(const TempDir& dir, std::chrono::system_clock::time_point start,
                     const std::vector<std::int64_t>& offsets) {
  std::vector<testing::JobStep> steps;
  for (std::size_t s = 0; s < offsets.size(); ++s) {
    steps.push_back({.step = static_cast<std::int64_t>(s),
                     .tensors = {{"loss", testing::float_tensor({}, {1.0f})}}});
  }
  testing::write_job(dir.path(), steps, {testing::collection("losses", {"^loss$"})});
  testing::stamp_index_files(dir.path(), start, offsets);
  return Trial::open(dir.path().string(), {.end_of_job_grace = std::chrono::milliseconds(0)});
}

std::unique_ptr<MaxInitializationTimeRule> trial_rule(const Trial& trial,
                                                      const RuleParameters& parameters = {}) {
  auto rule = testing::make_rule("MaxInitializationTime", trial, parameters);
  return std::unique_ptr<MaxInitializationTimeRule>(
      dynamic_cast<MaxInitializationTimeRule*>(rule.release()));
}

TEST(MaxInitializationTimeTrial, AReplayDoesNotKnowWhenTheJobStartedAndJudgesNoStep) {
  TempDir dir;
  // Steps an hour apart, written a day ago: when the job started is not in smdebug's files.
  const Trial trial = job_with_times(dir, std::chrono::system_clock::now() - std::chrono::hours(24),
                                     {0, 3600, 7200});
  const auto rule = trial_rule(trial);
  const InvokeResult result = invoke_rule(*rule);
  EXPECT_EQ(result.triggered_steps, Steps{});
  EXPECT_EQ(result.steps_evaluated, 0) << "ends in Error: it could not look";
  EXPECT_TRUE(rule->required_tensors().nothing);
}

TEST(MaxInitializationTimeTrial, TheClockFiresOnceWhenNoStepHasArrived) {
  TempDir dir;
  // A job that has written its collections and nothing else yet.
  const Trial trial = testing::write_job(dir.path(), {});
  const auto rule = trial_rule(trial, {{"threshold", "20"}});
  EXPECT_EQ(rule->check_interval(), std::chrono::milliseconds(1000));
  const auto now = std::chrono::system_clock::now();
  EXPECT_FALSE(rule->invoke_at(now + minutes(19)));
  ASSERT_TRUE(rule->invoke_at(now + minutes(21)));
  const Finding& finding = rule->last_finding();
  EXPECT_EQ(finding.step, std::nullopt);
  ASSERT_EQ(finding.figures.size(), 2u);
  // 21 min after `now`, which is a little after the rule started: 21 min and a few ms.
  EXPECT_NEAR(finding.figures[0].value, 21.0, 0.01);
  EXPECT_EQ(finding.figures[1], (Figure{"threshold", 20.0, std::nullopt}));
  EXPECT_NE(finding.message.find("no step at all in the 21"), std::string::npos) << finding.message;
  EXPECT_FALSE(rule->invoke_at(now + minutes(40))) << "the same silence, already reported";
}

TEST(MaxInitializationTimeTrial, TheClockIsQuietOnceAStepHasCome) {
  TempDir dir;
  const Trial trial = job_with_times(dir, std::chrono::system_clock::now() - minutes(5), {0});
  const auto rule = trial_rule(trial);
  EXPECT_FALSE(rule->invoke_at(std::chrono::system_clock::now() + minutes(30)))
      << "step 0 is in the trial, though the rule has not been invoked at it";
}

TEST(MaxInitializationTimeTrial, AFirstStepArrivingAfterTheWatchBeganIsJudgedFromItsStart) {
  // Stamped in the future: as a watch that began before the job's first step sees it.
  for (const auto& [after, fires] :
       std::vector<std::pair<minutes, bool>>{{minutes(25), true}, {minutes(15), false}}) {
    TempDir dir;
    const Trial trial = job_with_times(dir, std::chrono::system_clock::now() + after, {0, 60});
    const auto rule = trial_rule(trial);
    const InvokeResult result = invoke_rule(*rule);
    EXPECT_EQ(result.triggered_steps, fires ? Steps{0} : Steps{}) << after.count();
    EXPECT_EQ(result.steps_evaluated, 1) << "the first step only";
    if (fires) {
      // 25 min after a `now` a little before the rule started: 25 min less a few ms.
      const Finding finding = testing::finding_at("MaxInitializationTime", trial, 0);
      ASSERT_EQ(finding.figures.size(), 2u);
      EXPECT_NEAR(finding.figures[0].value, 25.0, 0.01);
      EXPECT_NE(finding.message.find("the first step (step 0) arrived 2"), std::string::npos)
          << finding.message;
    }
  }
}

}  // namespace
}  // namespace rulestream
