// The ledger of rule outcomes that both formats' rule runs hand their findings to: events
// completed and routed, a sink that throws counted and never fatal, stop actions once, and the
// status each rule ends with, reason by reason.
#include "engine/graph/rule_ledger.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <mutex>
#include <stdexcept>

#include "tests/support/recording_sink.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using ::testing::HasSubstr;
using testing::RecordingSink;
using ::testing::StartsWith;
using testing::TempDir;

// A sink whose every write and flush throws, as a broken plugin's might.
class ThrowingSink final : public Sink {
 public:
  std::string describe() const override { return "throwing"; }
  void write(const RuleEvent&) override { throw std::runtime_error("cannot deliver"); }
  void flush() override { throw std::runtime_error("cannot flush"); }
};

RuleConfig configured(const std::string& name, const std::string& rule) {
  RuleConfig config;
  config.configuration_name = name;
  config.rule = rule;
  return config;
}

// A ledger over `rules` (configuration names; every rule is "Probe") and the sinks given, the
// problems it reports kept.
class LedgerFixture {
 public:
  LedgerFixture(const std::vector<std::string>& names, std::vector<std::unique_ptr<Sink>> sinks,
                std::vector<std::vector<StopAction>> stops = {})
      : sinks_(std::move(sinks)) {
    std::vector<RuleConfig> configs;
    std::vector<LedgerRule> rules;
    for (std::size_t i = 0; i < names.size(); ++i) {
      configs.push_back(configured(names[i], "Probe"));
      rules.push_back({.configuration_name = names[i],
                       .rule = "Probe",
                       .stop_actions = i < stops.size() ? stops[i] : std::vector<StopAction>{}});
    }
    std::vector<SinkLabel> labels;
    for (const auto& sink : sinks_) labels.push_back(label_of(sink->describe()));
    routing_ = std::make_unique<SinkRouting>(configs, labels);
    ledger_ = std::make_unique<RuleLedger>(std::move(rules), sinks_, *routing_,
                                           [this](std::string path, std::string message) {
                                             const std::lock_guard lock(mutex_);
                                             problems_.push_back(path + "|" + message);
                                           });
    ledger_->name_trial("job-7");
  }

  RuleLedger& ledger() { return *ledger_; }
  std::vector<std::string> problems() {
    const std::lock_guard lock(mutex_);
    return problems_;
  }

 private:
  std::vector<std::unique_ptr<Sink>> sinks_;
  std::unique_ptr<SinkRouting> routing_;
  std::mutex mutex_;
  std::vector<std::string> problems_;
  std::unique_ptr<RuleLedger> ledger_;
};

RuleEvent at_step(std::int64_t step, std::string message = "loss 9e9") {
  Finding finding;
  finding.tensors = {"loss"};
  finding.figures = {Figure{.name = "value", .value = 9e9, .tensor = std::nullopt}};
  finding.message = std::move(message);
  return RuleLedger::condition(std::move(finding), step, Mode::Train, step / 2);
}

const auto kHealthy = [](std::size_t) { return RuleAccount{}; };

TEST(RuleLedger, CompletesAnEventWithItsTrialAndRuleAndSendsIt) {
  auto sink = std::make_unique<RecordingSink>();
  RecordingSink* recorded = sink.get();
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::move(sink));
  LedgerFixture fixture({"Divergence of loss"}, std::move(sinks));

  fixture.ledger().fire(0, at_step(12));

  const std::vector<RuleEvent> events = recorded->events();
  ASSERT_EQ(events.size(), 1U);
  EXPECT_EQ(events[0].kind, RuleEvent::Kind::ConditionMet);
  EXPECT_EQ(events[0].trial, "job-7");
  EXPECT_EQ(events[0].rule_configuration, "Divergence of loss");
  EXPECT_EQ(events[0].rule, "Probe");
  EXPECT_EQ(events[0].global_step, 12);
  EXPECT_EQ(events[0].mode, Mode::Train);
  EXPECT_EQ(events[0].mode_step, 6);
  EXPECT_EQ(events[0].tensors, std::vector<std::string>{"loss"});
  EXPECT_EQ(events[0].message, "loss 9e9");
  EXPECT_NE(events[0].time, std::chrono::system_clock::time_point{});
  EXPECT_EQ(fixture.ledger().fired(0), 1);
}

TEST(RuleLedger, AFindingWithoutWordsSaysTheRuleAndStep) {
  auto sink = std::make_unique<RecordingSink>();
  RecordingSink* recorded = sink.get();
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::move(sink));
  LedgerFixture fixture({"P"}, std::move(sinks));

  fixture.ledger().fire(0, at_step(3, ""));

  ASSERT_EQ(recorded->events().size(), 1U);
  EXPECT_EQ(recorded->events()[0].message, "Probe condition met at step 3");
}

TEST(RuleLedger, ASinkThatThrowsIsCountedAndReportedAndTheOthersStillGetEverything) {
  auto good = std::make_unique<RecordingSink>("good");
  RecordingSink* recorded = good.get();
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::make_unique<ThrowingSink>());
  sinks.push_back(std::move(good));
  LedgerFixture fixture({"P"}, std::move(sinks));

  fixture.ledger().evaluated(0, 2);
  fixture.ledger().fire(0, at_step(1));
  fixture.ledger().fire(0, at_step(2));
  const LedgerSummary summary = fixture.ledger().finish({}, kHealthy);

  // Two conditions met and one status written, one flush: four failures, each reported.
  EXPECT_EQ(fixture.ledger().sink_failures(), 4);
  const std::vector<std::string> problems = fixture.problems();
  ASSERT_EQ(problems.size(), 4U);
  EXPECT_EQ(problems[0], "|throwing: cannot deliver");
  EXPECT_EQ(problems[3], "|throwing: cannot flush");
  ASSERT_EQ(recorded->events().size(), 3U);  // two firings and the status
  ASSERT_EQ(summary.statuses.size(), 1U);
  EXPECT_EQ(summary.statuses[0].status, RuleStatus::IssuesFound);
  EXPECT_EQ(summary.statuses[0].times_fired, 2);
  EXPECT_EQ(summary.statuses[0].steps_evaluated, 2);
  EXPECT_EQ(summary.conditions_met, 2);
  EXPECT_FALSE(summary.rule_errors);
}

TEST(RuleLedger, StopActionsRunTheFirstTimeARuleFiresOnly) {
  TempDir dir;
  const auto marks = dir.path() / "marks";
  StopAction append;
  append.command =
      "echo \"$RULESTREAM_RULE_CONFIGURATION $RULESTREAM_STEP\" >> '" + marks.string() + "'";
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::make_unique<RecordingSink>());
  LedgerFixture fixture({"Stops", "Quiet"}, std::move(sinks), {{append}});

  fixture.ledger().fire(0, at_step(5));
  fixture.ledger().fire(0, at_step(6));
  fixture.ledger().fire(0, at_step(7));
  const LedgerSummary summary = fixture.ledger().finish({}, kHealthy);  // waits for the command

  std::ifstream in(marks);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  EXPECT_EQ(lines, std::vector<std::string>{"Stops 5"});
  // The status says what the action did.
  EXPECT_THAT(summary.statuses[0].message, HasSubstr("ran `echo"));
  EXPECT_EQ(summary.statuses[1].message, "");
}

// Each reason for a status, in the order the ledger weighs them: a failure beats a firing, a
// firing beats a silence that is no all-clear, which beats a job not read to the end.
TEST(RuleLedger, StatusesWeighFailureThenFiringThenSilenceThenTheEnding) {
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::make_unique<RecordingSink>());
  LedgerFixture fixture({"Failed", "Fired", "Unread", "Healthy", "NeverRan"}, std::move(sinks));
  RuleLedger& ledger = fixture.ledger();
  for (std::size_t rule = 0; rule < 4; ++rule) ledger.evaluated(rule, 10);
  ledger.fire(0, at_step(1));
  ledger.fail(0, "at step 4: boom");
  ledger.fail(0, "at step 5: a second failure is not kept");
  ledger.fire(1, at_step(2));
  const auto account = [](std::size_t rule) {
    RuleAccount said;
    if (rule == 1 || rule == 2) said.caveat = "could not read its data at 1 of 10 steps";
    if (rule == 2) said.why_silent = said.caveat;
    if (rule == 4) said.why_silent = "evaluated no step";
    return said;
  };

  const LedgerSummary read = ledger.finish({}, account);

  ASSERT_EQ(read.statuses.size(), 5U);
  EXPECT_EQ(read.statuses[0].status, RuleStatus::Error);
  EXPECT_EQ(read.statuses[0].message, "at step 4: boom");
  EXPECT_EQ(read.statuses[1].status, RuleStatus::IssuesFound);
  EXPECT_EQ(read.statuses[1].message, "could not read its data at 1 of 10 steps");
  EXPECT_EQ(read.statuses[2].status, RuleStatus::Error);
  EXPECT_EQ(read.statuses[2].message, "could not read its data at 1 of 10 steps");
  EXPECT_EQ(read.statuses[3].status, RuleStatus::NoIssuesFound);
  EXPECT_EQ(read.statuses[3].message, "");
  EXPECT_EQ(read.statuses[4].status, RuleStatus::Error);
  EXPECT_EQ(read.statuses[4].steps_evaluated, 0);
  EXPECT_TRUE(read.rule_errors);
  EXPECT_EQ(read.conditions_met, 2);
}

TEST(RuleLedger, ADefaultRuleWithNothingToEvaluateIsNotApplicableNotAnError) {
  std::vector<LedgerRule> rules{
      {.configuration_name = "Named", .rule = "GradientExplosion"},
      {.configuration_name = "Default", .rule = "GradientExplosion", .only_where_applicable = true},
      {.configuration_name = "DefaultUnread", .rule = "Divergence", .only_where_applicable = true}};
  std::vector<RuleConfig> configs;
  for (const LedgerRule& rule : rules)
    configs.push_back(configured(rule.configuration_name, rule.rule));
  std::vector<std::unique_ptr<Sink>> sinks;
  const SinkRouting routing(configs, {});
  RuleLedger ledger(std::move(rules), sinks, routing, [](std::string, std::string) {});
  const LedgerSummary read = ledger.finish({}, [](std::size_t rule) {
    RuleAccount said;
    said.why_silent = rule < 2 ? "the logdir has no gradient_norm series" : "steps unreadable";
    said.nothing_to_evaluate = rule < 2;
    return said;
  });
  ASSERT_EQ(read.statuses.size(), 3U);
  EXPECT_EQ(read.statuses[0].status, RuleStatus::Error);  // asked for by name
  EXPECT_EQ(read.statuses[1].status, RuleStatus::NotApplicable);
  EXPECT_EQ(read.statuses[1].message, "the logdir has no gradient_norm series");
  EXPECT_EQ(read.statuses[2].status, RuleStatus::Error);  // data not read: no excuse
  EXPECT_TRUE(read.rule_errors);
}

TEST(RuleLedger, AJobNotReadToItsEndIsNoAllClearAndEveryStatusSaysWhy) {
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::make_unique<RecordingSink>());
  LedgerFixture failed({"Healthy", "Fired"}, std::move(sinks));
  failed.ledger().evaluated(0, 3);
  failed.ledger().evaluated(1, 3);
  failed.ledger().fire(1, at_step(2));

  const LedgerSummary summary = failed.ledger().finish(
      {.source_failure = "s3://b/job: 403 Forbidden", .interrupted = false, .unread = {}},
      kHealthy);

  EXPECT_EQ(summary.statuses[0].status, RuleStatus::Error);
  EXPECT_EQ(summary.statuses[0].message,
            "the job could not be read to the end: s3://b/job: 403 Forbidden");
  EXPECT_EQ(summary.statuses[1].status, RuleStatus::IssuesFound);
  EXPECT_THAT(summary.statuses[1].message, StartsWith("the job could not be read to the end"));

  std::vector<std::unique_ptr<Sink>> more;
  more.push_back(std::make_unique<RecordingSink>());
  LedgerFixture interrupted({"Healthy"}, std::move(more));
  interrupted.ledger().evaluated(0, 3);
  const LedgerSummary stopped = interrupted.ledger().finish(
      {.source_failure = {}, .interrupted = true, .unread = "4 index files unread"}, kHealthy);
  EXPECT_EQ(stopped.statuses[0].status, RuleStatus::Error);
  EXPECT_EQ(stopped.statuses[0].message, "interrupted: not read to the end (4 index files unread)");
}

TEST(RuleLedger, StatusesGoToTheRulesSinksToo) {
  auto sink = std::make_unique<RecordingSink>();
  RecordingSink* recorded = sink.get();
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::move(sink));
  LedgerFixture fixture({"A", "B"}, std::move(sinks));
  fixture.ledger().evaluated(0);
  fixture.ledger().evaluated(1);

  fixture.ledger().finish({}, kHealthy);

  ASSERT_TRUE(recorded->status_of("A"));
  ASSERT_TRUE(recorded->status_of("B"));
  EXPECT_EQ(recorded->status_of("A")->status, RuleStatus::NoIssuesFound);
  EXPECT_EQ(recorded->status_of("B")->trial, "job-7");
}

TEST(RuleLedger, FiringsGroupIntoIncidentsThatResolveWhenClearedOrAtTheEnd) {
  std::vector<LedgerRule> rules{
      {.configuration_name = "D", .rule = "Divergence", .clears_itself = true}};
  std::vector<RuleConfig> configs{configured("D", "Divergence")};
  auto sink = std::make_unique<RecordingSink>();
  RecordingSink* recorded = sink.get();
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::move(sink));
  const SinkRouting routing(configs, {label_of(sinks[0]->describe())});
  RuleLedger ledger(std::move(rules), sinks, routing, [](std::string, std::string) {});
  ledger.name_trial("job-7");

  ledger.fire(0, at_step(3));
  ledger.fire(0, at_step(5));
  ledger.clear(0, "loss", 30);
  ledger.clear(0, "loss", 31);  // nothing open: nothing said
  ledger.fire(0, at_step(40));
  const LedgerSummary read = ledger.finish({}, kHealthy);

  const std::vector<RuleEvent> events = recorded->events();
  ASSERT_EQ(events.size(), 6U);
  const auto state = [&](std::size_t i) { return events[i].incident->state; };
  EXPECT_EQ(state(0), IncidentNote::State::Opened);
  EXPECT_EQ(events[0].incident->id, "D/loss#1");
  EXPECT_EQ(state(1), IncidentNote::State::Updated);
  EXPECT_TRUE(events[1].updates_an_incident());
  EXPECT_EQ(events[2].kind, RuleEvent::Kind::IncidentResolved);
  EXPECT_EQ(events[2].global_step, 30);
  EXPECT_EQ(events[2].incident->firings, 2);
  EXPECT_EQ(events[2].trial, "job-7");
  EXPECT_EQ(events[2].rule_configuration, "D");
  EXPECT_EQ(events[3].incident->id, "D/loss#2");
  EXPECT_EQ(state(3), IncidentNote::State::Opened);
  // The end resolves the second before the status says the totals.
  EXPECT_EQ(events[4].kind, RuleEvent::Kind::IncidentResolved);
  EXPECT_EQ(events[4].incident->id, "D/loss#2");
  EXPECT_EQ(events[4].message.rfind("open when the job ended", 0), 0U) << events[4].message;
  EXPECT_EQ(events[5].kind, RuleEvent::Kind::Status);
  EXPECT_EQ(read.statuses[0].times_fired, 3);
  EXPECT_EQ(read.statuses[0].incidents, 2);
}

}  // namespace
}  // namespace rulestream
