// What rules do when they fire, through the pipeline: stop actions (once per rule and run),
// notify routing to sinks, stop_training_on_fire, and StalledTrainingRule in replay (from the
// files' timestamps) and live (from its timer).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>
#include <thread>

#include "apps/simulator/job_simulator.hpp"
#include "engine/graph/rule_pipeline.hpp"
#include "stages/format/trial_writer.hpp"
#include "tests/support/recording_sink.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/sleeping_child.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::RecordingSink;
using testing::SleepingChild;
using testing::TempDir;
using namespace std::chrono_literals;
using Steps = std::vector<std::int64_t>;

// Every wait is bounded: a bug fails the test instead of hanging it.
constexpr auto kPatience = 20s;

// A one-worker job whose gradients vanish from step 5 of 20: VanishingGradient fires 15 times.
std::filesystem::path vanishing_job(const TempDir& dir) {
  JobSimulatorOptions options;
  options.output = dir.path() / "job";
  options.scenario = JobScenario::VanishingGradients;
  options.steps = 20;
  options.fault_step = 5;
  options.tensor_size = 16;
  JobSimulator(options).run();
  return options.output;
}

PipelineConfig config_for(const std::filesystem::path& trial, std::vector<RuleConfig> rules) {
  PipelineConfig config;
  config.paths = {trial.string()};
  config.rules = std::move(rules);
  config.end_of_job_grace = 100ms;
  return config;
}

RuleConfig rule(std::string configuration, std::string name,
                std::map<std::string, std::string> parameters = {}) {
  RuleConfig config;
  config.configuration_name = std::move(configuration);
  config.rule = std::move(name);
  config.parameters = std::move(parameters);
  return config;
}

StopAction stop_command(std::string command) {
  StopAction action;
  action.command = std::move(command);
  return action;
}

struct Sinks {
  std::vector<std::unique_ptr<Sink>> owned;
  std::vector<RecordingSink*> recording;
  explicit Sinks(std::initializer_list<const char*> names) {
    for (const char* name : names) {
      auto sink = std::make_unique<RecordingSink>(name);
      recording.push_back(sink.get());
      owned.push_back(std::move(sink));
    }
  }
};

// The RuleConfigError building the pipeline throws ("" when it builds), with a recording sink
// for each configured sink (at least one).
std::string config_error(PipelineConfig config) {
  std::vector<std::unique_ptr<Sink>> sinks;
  do {
    sinks.push_back(std::make_unique<RecordingSink>());
  } while (sinks.size() < config.sinks.size());
  try {
    RulePipeline pipeline(std::move(config), std::move(sinks));
  } catch (const RuleConfigError& error) {
    return error.what();
  }
  return {};
}

TEST(RuleActions, AStopCommandRunsOnceHoweverOftenTheRuleFires) {
  TempDir dir;
  const auto job = vanishing_job(dir);
  const auto log = dir.path() / "stops.log";
  auto vanishing = rule("VG", "VanishingGradient");
  vanishing.stop_actions = {stop_command("echo \"$RULESTREAM_STEP\" >> '" + log.string() + "'")};
  Sinks sinks({"recording"});
  RulePipeline pipeline(config_for(job, {vanishing, rule("quiet", "ExplodingTensor")}),
                        std::move(sinks.owned));
  const PipelineReport report = pipeline.run();
  EXPECT_EQ(report.conditions_met, 15);
  EXPECT_EQ(testing::read_text_file(log), "5\n") << "once, at the first firing";
  const auto status = sinks.recording[0]->status_of("VG");
  ASSERT_TRUE(status);
  EXPECT_EQ(status->status, RuleStatus::IssuesFound);
  EXPECT_NE(status->message.find("ran `echo"), std::string::npos) << status->message;
  EXPECT_TRUE(sinks.recording[0]->status_of("quiet")->message.empty());
  EXPECT_TRUE(report.problems.empty());
}

TEST(RuleActions, AStopActionSignalsTheProcess) {
  TempDir dir;
  const auto job = vanishing_job(dir);
  SleepingChild child;
  auto vanishing = rule("VG", "VanishingGradient");
  StopAction kill;
  kill.pid = child.pid();
  kill.signal = SIGINT;
  vanishing.stop_actions = {kill};
  Sinks sinks({"recording"});
  RulePipeline pipeline(config_for(job, {vanishing}), std::move(sinks.owned));
  pipeline.run();
  const int status = child.wait();
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGINT);
  EXPECT_NE(sinks.recording[0]->status_of("VG")->message.find("sent SIGINT to process " +
                                                              std::to_string(child.pid())),
            std::string::npos);
}

TEST(RuleActions, AFailingStopActionIsReportedAndTheRunGoesOn) {
  TempDir dir;
  const auto job = vanishing_job(dir);
  auto vanishing = rule("VG", "VanishingGradient");
  vanishing.stop_actions = {stop_command("echo no >&2; exit 7")};
  Sinks sinks({"recording"});
  RulePipeline pipeline(config_for(job, {vanishing}), std::move(sinks.owned));
  const PipelineReport report = pipeline.run();
  EXPECT_EQ(report.conditions_met, 15) << "every step still evaluated";
  ASSERT_EQ(report.problems.size(), 1u);
  EXPECT_EQ(report.problems[0].message,
            "rule VG (VanishingGradient) fired at step 5: stop action failed: `echo no >&2; exit "
            "7` exited with status 7");
  const auto status = sinks.recording[0]->status_of("VG");
  EXPECT_EQ(status->status, RuleStatus::IssuesFound);
  EXPECT_EQ(status->message, "stop action failed: `echo no >&2; exit 7` exited with status 7");
}

TEST(RuleActions, NotifySendsARulesEventsToTheSinksItNamesBesidesTheGeneralOnes) {
  TempDir dir;
  const auto job = vanishing_job(dir);
  auto paged = rule("paged", "VanishingGradient");
  paged.notify_sinks = {"oncall"};
  Sinks sinks({"all", "oncall"});
  RulePipeline pipeline(config_for(job, {paged, rule("logged", "VanishingGradient")}),
                        std::move(sinks.owned));
  pipeline.run();
  const RecordingSink& all = *sinks.recording[0];
  const RecordingSink& oncall = *sinks.recording[1];
  EXPECT_EQ(all.steps_fired("paged").size(), 15u);
  EXPECT_EQ(all.steps_fired("logged").size(), 15u);
  EXPECT_EQ(oncall.steps_fired("paged").size(), 15u);
  EXPECT_TRUE(oncall.steps_fired("logged").empty()) << "oncall is reserved for what names it";
  EXPECT_TRUE(oncall.status_of("paged"));
  EXPECT_FALSE(oncall.status_of("logged"));
}

TEST(RuleActions, ConfiguredSinksAnswerToTheirNameAndTarget) {
  TempDir dir;
  const auto job = vanishing_job(dir);
  auto config = config_for(job, {rule("paged", "VanishingGradient")});
  config.rules[0].notify_sinks = {"pager"};
  config.sinks = {{.name = "pager", .type = "file", .target = "/tmp/a"},
                  {.type = "file", .target = "/tmp/b"}};
  EXPECT_EQ(config_error(config), "");
  config.rules[0].notify_sinks = {"/tmp/b"};
  EXPECT_EQ(config_error(config), "");
  config.rules[0].notify_sinks = {"pagr"};
  config.sinks.push_back({.type = "webhook", .target = "https://hooks.example/secret"});
  const std::string error = config_error(config);
  EXPECT_EQ(error,
            "rule configuration paged: notify action: no sink named 'pagr' (sinks: pager, "
            "/tmp/b, an unnamed webhook)");
}

TEST(RuleActions, StopTrainingOnFireNeedsAStopActionBeforeAnythingIsRead) {
  TempDir dir;
  const auto job = vanishing_job(dir);
  const auto stalled = rule("Stalled", "StalledTrainingRule", {{"stop_training_on_fire", "True"}});
  const std::string error = config_error(config_for(job, {stalled}));
  EXPECT_NE(error.find("rule configuration Stalled (StalledTrainingRule)"), std::string::npos)
      << error;
  EXPECT_NE(error.find("parameter stop_training_on_fire is True, but no stop action"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("--stop-pid"), std::string::npos) << error;

  auto with_own = stalled;
  with_own.stop_actions = {stop_command("true")};
  EXPECT_EQ(config_error(config_for(job, {with_own})), "");
  auto with_default = config_for(job, {stalled});
  with_default.default_stop_actions = {stop_command("true")};
  EXPECT_EQ(config_error(with_default), "");
  EXPECT_EQ(config_error(config_for(job, {rule("Stalled", "StalledTrainingRule",
                                               {{"stop_training_on_fire", "False"}})})),
            "");
}

// Writes a one-worker job of `offsets.size()` steps whose index files were modified at
// 2024-01-01 plus offsets[s] seconds.
std::filesystem::path job_with_times(const TempDir& dir, const std::vector<std::int64_t>& offsets,
                                     std::chrono::system_clock::time_point start) {
  std::vector<testing::JobStep> steps;
  for (std::size_t s = 0; s < offsets.size(); ++s) {
    steps.push_back({.step = static_cast<std::int64_t>(s),
                     .tensors = {{"loss", testing::float_tensor({}, {1.0f})}}});
  }
  const auto root = dir.path() / "timed";
  testing::write_job(root, steps, {testing::collection("losses", {"^loss$"})});
  testing::stamp_index_files(root, start, offsets);
  return root;
}

const std::chrono::system_clock::time_point k2024{std::chrono::seconds(1'704'067'200)};

TEST(RuleActions, TheDefaultStopGoesToRulesThatAskToStopOnly) {
  TempDir dir;
  // Step 4 arrives 500 s after step 3.
  const auto job = job_with_times(dir, {0, 10, 20, 30, 530, 540}, k2024);
  const auto log = dir.path() / "stops.log";
  auto config =
      config_for(job, {rule("Stalled", "StalledTrainingRule",
                            {{"threshold", "100"}, {"stop_training_on_fire", "True"}}),
                       rule("Always", "AllZero", {{"tensor_regex", "loss"}, {"threshold", "0"}})});
  config.default_stop_actions = {
      stop_command("echo \"$RULESTREAM_RULE $RULESTREAM_STEP\" >> '" + log.string() + "'")};
  Sinks sinks({"recording"});
  RulePipeline pipeline(std::move(config), std::move(sinks.owned));
  pipeline.run();
  EXPECT_EQ(sinks.recording[0]->steps_fired("Stalled"), Steps{4});
  EXPECT_FALSE(sinks.recording[0]->steps_fired("Always").empty());
  EXPECT_EQ(testing::read_text_file(log), "StalledTrainingRule 4\n");
}

TEST(StalledTrainingInThePipeline, ReplayFiresAtTheStepAfterTheGapInTheFilesTimestamps) {
  TempDir dir;
  const auto gap = job_with_times(dir, {0, 10, 20, 30, 40, 2000, 2010, 2020}, k2024);
  Sinks sinks({"recording"});
  RulePipeline pipeline(config_for(gap, {rule("Stalled", "StalledTrainingRule")}),
                        std::move(sinks.owned));
  const PipelineReport report = pipeline.run();
  EXPECT_EQ(sinks.recording[0]->steps_fired("Stalled"), Steps{5});
  EXPECT_EQ(report.tensors_decoded, 0) << "the rule reads no tensor";
  const auto events = sinks.recording[0]->events();
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events[0].figures, (std::vector<Figure>{{"last_step", 4.0, std::nullopt},
                                                    {"seconds_without_step", 1960.0, std::nullopt},
                                                    {"threshold", 1800.0, std::nullopt}}));

  TempDir steady_dir;
  const auto steady = job_with_times(steady_dir, {0, 10, 20, 30, 40, 50}, k2024);
  Sinks quiet_sinks({"recording"});
  RulePipeline quiet(config_for(steady, {rule("Stalled", "StalledTrainingRule")}),
                     std::move(quiet_sinks.owned));
  EXPECT_EQ(quiet.run().conditions_met, 0);
}

// Waits until `sink` holds a condition-met event of `configuration`; false after kPatience.
bool wait_for_event(const RecordingSink& sink, const std::string& configuration) {
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (sink.steps_fired(configuration).empty()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

// A one-worker job's writer, its collections already written (steps are released once they are).
TrialWriter job_writer(const std::filesystem::path& root) {
  TrialWriter writer({.root = root});
  CollectionsFile collections;
  collections.num_workers = 1;
  writer.write_collections(collections);
  return writer;
}

void write_loss_step(TrialWriter& writer, std::int64_t step) {
  writer.begin_step(step, Mode::Train, step);
  writer.add_tensor("loss", testing::float_tensor({}, {1.0f}));
  writer.end_step();
}

TEST(StalledTrainingInThePipeline, WatchFiresFromTheTimerWhenTheWriterStops) {
  TempDir dir;
  const auto root = dir.path() / "job";
  TrialWriter writer = job_writer(root);

  auto config = config_for(root, {rule("Stalled", "StalledTrainingRule", {{"threshold", "1"}})});
  config.follow = true;
  Sinks sinks({"recording"});
  const RecordingSink& sink = *sinks.recording[0];
  RulePipeline pipeline(std::move(config), std::move(sinks.owned));

  std::chrono::steady_clock::time_point last_write;
  std::chrono::steady_clock::time_point fired_at;
  bool fired = false;
  std::thread training([&] {
    for (std::int64_t step = 0; step < 3; ++step) {
      std::this_thread::sleep_for(100ms);  // well within the threshold
      write_loss_step(writer, step);
    }
    last_write = std::chrono::steady_clock::now();
    fired = wait_for_event(sink, "Stalled");
    fired_at = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(1500ms);  // the same stall goes on: no second event
    writer.write_end_marker();
  });
  const PipelineReport report = pipeline.run();
  training.join();

  ASSERT_TRUE(fired) << "no stall reported within " << kPatience.count() << " s";
  EXPECT_EQ(sink.steps_fired("Stalled"), Steps{2}) << "once, naming the last step seen";
  // The threshold, plus at most one check interval (100 ms for 1 s) and scheduling slack.
  EXPECT_LT(fired_at - last_write, 5s);
  EXPECT_GE(fired_at - last_write, 1s);
  const auto events = sink.events();
  ASSERT_FALSE(events.empty());
  const RuleEvent& event = events.front();
  EXPECT_EQ(event.mode, Mode::Train);
  EXPECT_EQ(event.mode_step, 2);
  ASSERT_EQ(event.figures.size(), 3u);
  EXPECT_EQ(event.figures[0], (Figure{"last_step", 2.0, std::nullopt}));
  EXPECT_EQ(event.figures[1].name, "seconds_without_step");
  EXPECT_GT(event.figures[1].value, 1.0);
  EXPECT_EQ(event.figures[2], (Figure{"threshold", 1.0, std::nullopt}));
  EXPECT_NE(event.message.find("no new step for"), std::string::npos) << event.message;
  EXPECT_EQ(report.steps_released, 3);
  EXPECT_EQ(report.statuses.at(0).status, RuleStatus::IssuesFound);
}

TEST(StalledTrainingInThePipeline, WatchOfAJobSilentSinceBeforeItStartedFiresAtOnce) {
  TempDir dir;
  // Written an hour ago (the files' times), never ended.
  const auto root = dir.path() / "job";
  TrialWriter writer = job_writer(root);
  for (std::int64_t step = 0; step < 3; ++step) write_loss_step(writer, step);
  testing::stamp_index_files(root, std::chrono::system_clock::now() - 1h, {0, 10, 20});

  auto config = config_for(root, {rule("Stalled", "StalledTrainingRule", {{"threshold", "600"}})});
  config.follow = true;
  Sinks sinks({"recording"});
  const RecordingSink& sink = *sinks.recording[0];
  RulePipeline pipeline(std::move(config), std::move(sinks.owned));
  std::thread stopper([&] {
    wait_for_event(sink, "Stalled");
    pipeline.request_stop();
  });
  pipeline.run();
  stopper.join();
  EXPECT_EQ(sink.steps_fired("Stalled"), Steps{2});
  const auto events = sink.events();
  ASSERT_FALSE(events.empty());
  EXPECT_GT(events.front().figures.at(1).value, 3000.0) << "measured from the file's time";
}

}  // namespace
}  // namespace rulestream
