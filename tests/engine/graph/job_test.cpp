// One job interface over both formats (open_job): the same outcome, progress and statuses for an
// smdebug trial and a TensorBoard logdir, read through the same calls.
#include "engine/graph/job.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "sources/open/storage_factory.hpp"
#include "stages/format/tensorboard_writer.hpp"
#include "stages/tensorboard/logdir_runs.hpp"
#include "tests/support/recording_sink.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using ::testing::HasSubstr;
using testing::RecordingSink;
using testing::TempDir;

// A loss of 2.0 at steps 0..9, then NaN at step 10: NonFinite fires once, at step 10, in either
// format.
void write_smdebug_job(const std::filesystem::path& root) {
  std::vector<testing::JobStep> steps;
  for (std::int64_t step = 0; step <= 10; ++step) {
    const float loss = step == 10 ? std::nanf("") : 2.0F;
    steps.push_back(
        {.step = step, .mode = Mode::Train, .tensors = {{"loss", testing::filled({1}, loss)}}});
  }
  testing::write_job(root, steps, {testing::collection("losses", {"^loss$"})});
}

void write_logdir(const std::filesystem::path& logdir) {
  TensorBoardWriter writer(logdir / "events.out.tfevents.1.host");
  for (std::int64_t step = 0; step <= 10; ++step) {
    writer.add_scalar("loss", step, step == 10 ? std::nanf("") : 2.0F,
                      100.0 + static_cast<double>(step));
  }
}

PipelineConfig replay_of(const std::filesystem::path& path, const std::string& rule) {
  PipelineConfig config;
  config.paths = {path.string()};
  RuleConfig configured;
  configured.rule = rule;
  config.rules.push_back(configured);
  return config;
}

struct Ran {
  JobOutcome outcome;
  std::vector<RuleEvent> events;
  std::int64_t last_step = -1;
  std::uint64_t bytes = 0;
  bool has_trial = false;
};

Ran run_job(PipelineConfig config, TrialFormat format) {
  auto sink = std::make_unique<RecordingSink>();
  RecordingSink* recorded = sink.get();
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::move(sink));
  const std::unique_ptr<Job> job = open_job(std::move(config), std::move(sinks), format);
  EXPECT_EQ(job->format(), format);
  Ran ran;
  ran.outcome = job->run();
  ran.events = recorded->events();
  ran.last_step = job->progress().last_step;
  ran.bytes = job->progress().event_bytes;
  ran.has_trial = job->trial().has_value();
  return ran;
}

std::vector<std::int64_t> fired_steps(const std::vector<RuleEvent>& events) {
  std::vector<std::int64_t> steps;
  for (const RuleEvent& event : events) {
    if (event.kind == RuleEvent::Kind::ConditionMet) steps.push_back(event.global_step);
  }
  return steps;
}

TEST(Job, BothFormatsReportTheSameWayThroughOneInterface) {
  TempDir dir;
  write_smdebug_job(dir.path() / "trial");
  write_logdir(dir.path() / "logdir");

  const Ran smdebug = run_job(replay_of(dir.path() / "trial", "NonFinite"), TrialFormat::Smdebug);
  const Ran logdir =
      run_job(replay_of(dir.path() / "logdir", "NonFinite"), TrialFormat::TensorBoard);

  for (const Ran* ran : {&smdebug, &logdir}) {
    EXPECT_EQ(fired_steps(ran->events), std::vector<std::int64_t>{10});
    ASSERT_EQ(ran->outcome.statuses.size(), 1U);
    EXPECT_EQ(ran->outcome.statuses[0].status, RuleStatus::IssuesFound);
    EXPECT_EQ(ran->outcome.statuses[0].times_fired, 1);
    EXPECT_EQ(ran->outcome.conditions_met, 1);
    EXPECT_FALSE(ran->outcome.rule_errors);
    EXPECT_TRUE(ran->outcome.source_failure.empty());
    EXPECT_FALSE(ran->outcome.interrupted);
    EXPECT_EQ(ran->last_step, 10);  // progress, whatever the format, once the job has run
    EXPECT_GT(ran->bytes, 0U);
  }
  // What each format counts: an smdebug trial its steps, a logdir its values (one a step here).
  EXPECT_EQ(smdebug.outcome.statuses[0].steps_evaluated, 11);
  EXPECT_EQ(smdebug.outcome.evaluated_unit, "steps");
  EXPECT_THAT(smdebug.outcome.read, HasSubstr("11 steps (0 incomplete), 11 index files"));
  EXPECT_EQ(logdir.outcome.statuses[0].steps_evaluated, 11);
  EXPECT_EQ(logdir.outcome.evaluated_unit, "values");
  EXPECT_THAT(logdir.outcome.read, HasSubstr("1 runs, 1 event files"));
  EXPECT_THAT(logdir.outcome.read, HasSubstr("11 values"));
  // Only the smdebug job has a trial for what reads tensors (the report's charts).
  EXPECT_TRUE(smdebug.has_trial);
  EXPECT_FALSE(logdir.has_trial);
}

TEST(Job, AJobStoppedBeforeItRunsIsNoAllClear) {
  TempDir dir;
  write_logdir(dir.path());
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::make_unique<RecordingSink>());
  const std::unique_ptr<Job> job =
      open_job(replay_of(dir.path(), "LossSpike"), std::move(sinks), TrialFormat::TensorBoard);
  job->request_stop();

  const JobOutcome outcome = job->run();

  EXPECT_TRUE(outcome.interrupted);
  ASSERT_EQ(outcome.statuses.size(), 1U);
  EXPECT_EQ(outcome.statuses[0].status, RuleStatus::Error);
  EXPECT_THAT(outcome.statuses[0].message, HasSubstr("interrupted: not read to the end"));
}

// On an smdebug trial as on a logdir, a rule that says when its condition clears resolves its
// incident there, and a later firing opens a new one. Divergence on a loss of 1.0 that jumps to
// 100 at step 40 (>= 10x its best level: no confirmation) and is back at 1.0 from step 41: the
// median of the last 3 values is under the threshold from step 41 on, so the 20th calm value,
// step 60, clears it; the jump at step 80 opens incident #2, resolved when the job ends.
TEST(Job, OnAnSmdebugTrialARuleThatClearsResolvesItsIncidentThere) {
  TempDir dir;
  std::vector<testing::JobStep> steps;
  for (std::int64_t step = 0; step <= 100; ++step) {
    const float loss = step == 40 || step == 80 ? 100.0F : 1.0F;
    steps.push_back(
        {.step = step, .mode = Mode::Train, .tensors = {{"loss", testing::filled({1}, loss)}}});
  }
  testing::write_job(dir.path(), steps, {testing::collection("losses", {"^loss$"})});

  const Ran ran = run_job(replay_of(dir.path(), "Divergence"), TrialFormat::Smdebug);

  std::vector<std::tuple<RuleEvent::Kind, std::int64_t, std::string>> seen;
  for (const RuleEvent& event : ran.events) {
    if (event.kind == RuleEvent::Kind::Status) continue;
    ASSERT_TRUE(event.incident.has_value());
    seen.emplace_back(event.kind, event.global_step, event.incident->id);
  }
  using Kind = RuleEvent::Kind;
  EXPECT_EQ(seen, (std::vector<std::tuple<Kind, std::int64_t, std::string>>{
                      {Kind::ConditionMet, 40, "Divergence/loss#1"},
                      {Kind::IncidentResolved, 60, "Divergence/loss#1"},
                      {Kind::ConditionMet, 80, "Divergence/loss#2"},
                      {Kind::IncidentResolved, 100, "Divergence/loss#2"}}));
}

// A job asked to keep its series (the report) keeps, as it judges them, what a separate read of
// the logdir finds: every run (an empty one too), every tag, the restart rule applied, with its
// runs read on two threads. Not asked, it keeps nothing.
TEST(Job, AJobKeepsTheSeriesItReadsWhenAsked) {
  TempDir dir;
  for (const std::string run : {"a", "b", "c", "d"}) {
    TensorBoardWriter writer(dir.path() / run / "events.out.tfevents.1.host");
    for (std::int64_t step = 0; step < 300; ++step) {
      writer.add_scalar("loss", step, static_cast<float>(run[0]) / static_cast<float>(step + 1),
                        1.7e9 + static_cast<double>(step));
    }
    for (std::int64_t step = 250; step < 260; ++step) {  // resumed from a checkpoint
      writer.add_scalar("loss", step, -1.0F, 1.8e9 + static_cast<double>(step));
    }
    const std::vector<float> values{-1.0F, 0.5F, 2.0F};
    writer.add_histogram("weights", 0, values, 1.7e9);
  }
  TensorBoardWriter empty(dir.path() / "e" / "events.out.tfevents.1.host");

  PipelineConfig config = replay_of(dir.path(), "NonFinite");
  config.threads = 2;
  EXPECT_EQ(open_job(config, {}, TrialFormat::TensorBoard)->series(), nullptr);
  config.keep_series = true;
  const std::unique_ptr<Job> job = open_job(config, {}, TrialFormat::TensorBoard);
  job->run();
  ASSERT_NE(job->series(), nullptr);
  const SeriesStore& kept = *job->series();

  SeriesStore read;
  read_into_store(*open_storage(dir.path().string(), StorageOptions{}), read, {},
                  tensorboard_series_format());
  EXPECT_EQ(kept.run_names(), (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(kept.run_names(), read.run_names());
  for (const std::string run : {"a", "b", "c", "d"}) {
    const StoredSeries* loss = kept.find(run, "loss");
    ASSERT_NE(loss, nullptr) << run;
    ASSERT_EQ(loss->scalars.size(), 260U) << run;
    EXPECT_EQ(loss->scalars.back().value, -1.0) << run;
    EXPECT_EQ(loss->preempted, 50U) << run;
    const StoredSeries* again = read.find(run, "loss");
    ASSERT_EQ(again->scalars.size(), loss->scalars.size());
    for (std::size_t i = 0; i < loss->scalars.size(); ++i) {
      ASSERT_EQ(loss->scalars[i].step, again->scalars[i].step) << run << " " << i;
      ASSERT_EQ(loss->scalars[i].value, again->scalars[i].value) << run << " " << i;
    }
    ASSERT_NE(kept.find(run, "weights"), nullptr);
    EXPECT_EQ(kept.find(run, "weights")->histograms.size(), 1U);
  }
}

}  // namespace
}  // namespace rulestream
