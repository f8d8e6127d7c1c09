// JobRegistry: what /api/jobs shows of a job, and what it forgets.
#include "apps/serve/job_registry.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace rulestream {
namespace {

std::shared_ptr<const PipelineConfig> two_rules() {
  auto config = std::make_shared<PipelineConfig>();
  config->rules.push_back({.configuration_name = "VG", .rule = "VanishingGradient"});
  config->rules.push_back({.configuration_name = "", .rule = "NonFinite"});
  return config;
}

RuleEvent condition_met(const std::string& configuration, std::int64_t step) {
  RuleEvent event;
  event.rule_configuration = configuration;
  event.rule = configuration == "VG" ? "VanishingGradient" : configuration;
  event.global_step = step;
  event.message = "fired at " + std::to_string(step);
  return event;
}

RuleEvent status(const std::string& configuration, RuleStatus value, std::string message = "") {
  RuleEvent event = condition_met(configuration, 0);
  event.kind = RuleEvent::Kind::Status;
  event.status = value;
  event.message = std::move(message);
  return event;
}

// The condition of that type, or a failure naming it.
JobCondition condition(const JobSnapshot& job, const std::string& type) {
  for (const JobCondition& each : job.conditions) {
    if (each.type == type) return each;
  }
  ADD_FAILURE() << "no condition " << type;
  return {};
}

// Conditions beside the state: each with a reason a program can match, and the time its status
// last changed (not the time of every update).
TEST(JobRegistry, ConditionsSayWhatHoldsAndSinceWhen) {
  JobRegistry registry(10, 10);
  ASSERT_TRUE(registry.add("a", "/jobs/a", TrialFormat::Smdebug));
  JobSnapshot job = *registry.job("a");
  ASSERT_EQ(job.conditions.size(), 3U);
  EXPECT_FALSE(condition(job, "Following").status);
  EXPECT_EQ(condition(job, "Following").reason, "Queued");
  EXPECT_FALSE(condition(job, "IssuesFound").status);
  EXPECT_TRUE(condition(job, "RulesEvaluating").status);

  registry.start("a", two_rules());
  registry.record("a", condition_met("VG", 5));
  job = *registry.job("a");
  EXPECT_TRUE(condition(job, "Following").status);
  EXPECT_EQ(condition(job, "IssuesFound").reason, "RuleFired");
  EXPECT_EQ(condition(job, "IssuesFound").message, "VG fired; latest: fired at 5");
  const auto fired_at = condition(job, "IssuesFound").last_transition;

  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  registry.record("a", condition_met("VG", 7));
  registry.record("a", status("NonFinite", RuleStatus::Error, "could not read step 3"));
  registry.finish("a");
  job = *registry.job("a");
  EXPECT_EQ(condition(job, "IssuesFound").message, "VG fired; latest: fired at 7");
  EXPECT_EQ(condition(job, "IssuesFound").last_transition, fired_at);  // still True
  EXPECT_FALSE(condition(job, "RulesEvaluating").status);
  EXPECT_EQ(condition(job, "RulesEvaluating").reason, "RuleError");
  EXPECT_EQ(condition(job, "RulesEvaluating").message, "NonFinite: could not read step 3");
  EXPECT_GT(condition(job, "RulesEvaluating").last_transition, fired_at);
  EXPECT_EQ(condition(job, "Following").reason, "Finished");
}

TEST(JobRegistry, RulesAreInProgressUntilTheirStatusAndCountTheirFindings) {
  JobRegistry registry(10, 10);
  ASSERT_TRUE(registry.add("a", "/jobs/a", TrialFormat::Smdebug));
  EXPECT_FALSE(registry.add("a", "/elsewhere/a", TrialFormat::TensorBoard));
  EXPECT_EQ(registry.job("a")->state, JobState::Queued);
  registry.start("a", two_rules());
  registry.record("a", condition_met("VG", 5));
  registry.record("a", condition_met("VG", 7));
  registry.set_last_step("a", 9);
  registry.set_last_step("a", 8);  // a late, lower report never goes back
  auto job = *registry.job("a");
  EXPECT_EQ(job.state, JobState::Running);
  EXPECT_EQ(job.path, "/jobs/a");
  EXPECT_EQ(job.last_step, 9);
  ASSERT_EQ(job.rules.size(), 2u);
  EXPECT_EQ(job.rules[0].rule_configuration, "VG");
  EXPECT_EQ(job.rules[0].firings, 2);
  EXPECT_EQ(job.rules[0].last_finding, "fired at 7");
  EXPECT_EQ(job.rules[0].last_finding_step, 7);
  EXPECT_FALSE(job.rules[0].status.has_value());            // InProgress
  EXPECT_EQ(job.rules[1].rule_configuration, "NonFinite");  // defaulted to the rule's name
  registry.record("a", status("VG", RuleStatus::IssuesFound));
  registry.record("a", status("NonFinite", RuleStatus::Error, "could not read step 3"));
  registry.finish("a");
  job = *registry.job("a");
  EXPECT_EQ(job.state, JobState::Finished);
  EXPECT_TRUE(job.ended.has_value());
  EXPECT_EQ(job.rules[0].status, RuleStatus::IssuesFound);
  EXPECT_EQ(job.rules[1].status, RuleStatus::Error);
  EXPECT_EQ(job.rules[1].status_message, "could not read step 3");
  EXPECT_EQ(registry.events("a")->size(), 4u);
}

TEST(JobRegistry, KeepsTheLatestEventsOfAJobAndCountsTheOthers) {
  JobRegistry registry(10, 3);
  registry.add("a", "/jobs/a", TrialFormat::Smdebug);
  registry.start("a", two_rules());
  for (int step = 0; step < 5; ++step) registry.record("a", condition_met("VG", step));
  const auto events = *registry.events("a");
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events.front().global_step, 2);  // oldest kept first, newest last
  EXPECT_EQ(events.back().global_step, 4);
  EXPECT_EQ(registry.job("a")->events_dropped, 2);
  EXPECT_EQ(registry.job("a")->rules[0].firings, 5);  // firings count every one
}

TEST(JobRegistry, ForgetsTheOldestEndedJobsBeyondItsHistoryButNeverARunningOne) {
  JobRegistry registry(2, 10);
  for (const std::string id : {"a", "b", "c", "d"}) {
    registry.add(id, "/jobs/" + id, TrialFormat::Smdebug);
    registry.start(id, two_rules());
  }
  registry.finish("b");
  registry.fail("a", "the rules file does not parse");
  registry.finish("c");  // three ended, two kept: b (the first to end) goes
  EXPECT_FALSE(registry.job("b").has_value());
  EXPECT_FALSE(registry.events("b").has_value());
  EXPECT_EQ(registry.job("a")->state, JobState::Error);
  EXPECT_EQ(registry.job("a")->error, "the rules file does not parse");
  EXPECT_EQ(registry.job("c")->state, JobState::Finished);
  EXPECT_EQ(registry.job("d")->state, JobState::Running);
  const auto counts = registry.count_by_state();
  EXPECT_EQ(counts.at(JobState::Running), 1u);
  EXPECT_EQ(counts.at(JobState::Finished), 1u);
  EXPECT_EQ(counts.at(JobState::Error), 1u);
  EXPECT_EQ(counts.at(JobState::Queued), 0u);
  registry.finish("a");  // an ended job does not end twice
  EXPECT_EQ(registry.job("a")->state, JobState::Error);
  ASSERT_EQ(registry.jobs().size(), 3u);
  EXPECT_EQ(registry.jobs()[0].id, "a");  // by id
}

TEST(JobRegistry, AJobHandedOverIsQueuedAgainAsFound) {
  JobRegistry registry(1, 10);
  registry.add("a", "/jobs/a", TrialFormat::TensorBoard);
  const auto found = registry.job("a")->found;
  registry.start("a", two_rules());
  registry.record("a", condition_met("VG", 7));
  registry.set_last_step("a", 7);
  registry.finish("a");  // its rules drained as the service stopped
  registry.requeue("a");
  const JobSnapshot job = *registry.job("a");
  EXPECT_EQ(job.state, JobState::Queued);
  EXPECT_EQ(job.path, "/jobs/a");
  EXPECT_EQ(job.format, TrialFormat::TensorBoard);
  EXPECT_EQ(job.found, found);
  EXPECT_EQ(job.last_step, -1);
  EXPECT_TRUE(job.rules.empty());
  EXPECT_FALSE(job.ended);
  EXPECT_EQ(job.config, nullptr);
  EXPECT_TRUE(registry.events("a")->empty());
  // No longer in the history of ended jobs: ending another (history 1) does not forget it.
  registry.add("b", "/jobs/b", TrialFormat::Smdebug);
  registry.start("b", two_rules());
  registry.finish("b");
  EXPECT_TRUE(registry.job("a").has_value());
  // Taken again later, it runs and ends as any job.
  registry.start("a", two_rules());
  registry.finish("a");
  EXPECT_EQ(registry.job("a")->state, JobState::Finished);
  EXPECT_FALSE(registry.job("b").has_value());
}

}  // namespace
}  // namespace rulestream
