// `rulestream replay` and `rulestream watch`: what they print, where events go, the exit
// statuses, the errors, and a live watch of a job being written, through the real binary.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <functional>
#include <regex>
#include <sstream>
#include <system_error>

#include "apps/cli/cli.hpp"
#include "apps/simulator/job_simulator.hpp"
#include "core/model/compression.hpp"
#include "stages/format/trial_writer.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/cli_runner.hpp"
#include "tests/support/rule_test_jobs.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::ChildProcess;
using testing::TempDir;
using Clock = std::chrono::steady_clock;
using Steps = std::vector<std::int64_t>;

// Every wait on the real binary is bounded: a bug fails the test instead of hanging it.
constexpr auto kPatience = std::chrono::seconds(20);

using Outcome = testing::CliOutcome;
using testing::run_cli;

Outcome replay(std::vector<std::string> args) {
  return run_cli("replay", std::move(args));
}

void expect_one_line_error(const Outcome& outcome, std::initializer_list<std::string> fragments,
                           const std::string& command = "replay") {
  testing::expect_one_line_error(outcome, command, fragments);
}

// A tiny job: 1 worker, `steps` TRAIN steps, every step saved, 16-element tensors.
std::string simulate(const std::filesystem::path& output, JobScenario scenario,
                     std::int64_t steps = 12, std::int64_t fault_step = 6, bool end_marker = true) {
  JobSimulatorOptions options;
  options.output = output;
  options.scenario = scenario;
  options.steps = steps;
  options.tensor_size = 16;
  if (scenario != JobScenario::Healthy) options.fault_step = fault_step;
  options.write_end_marker = end_marker;
  JobSimulator(options).run();
  return output.string();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Each line as a JSON object; a line that is not one fails the test.
std::vector<boost::json::object> json_lines(const std::string& text) {
  std::vector<boost::json::object> events;
  for (const auto& line : lines_of(text)) {
    boost::system::error_code error;
    boost::json::value value = boost::json::parse(line, error);
    if (error || !value.is_object()) {
      ADD_FAILURE() << "not a JSON object: " << line;
      continue;
    }
    events.push_back(std::move(value.as_object()));
  }
  return events;
}

Steps fired_steps(const std::vector<boost::json::object>& events,
                  const std::string& configuration = {}) {
  Steps steps;
  for (const auto& event : events) {
    if (event.at("kind") != "condition_met") continue;
    if (!configuration.empty() && event.at("rule_configuration") != configuration.c_str()) {
      continue;
    }
    steps.push_back(event.at("global_step").as_int64());
  }
  return steps;
}

Steps steps_from(std::int64_t first, std::int64_t end) {
  Steps steps;
  for (std::int64_t step = first; step < end; ++step) steps.push_back(step);
  return steps;
}

// The keys docs/cli.md documents for a rule event ("Sinks and rule events"), with their types.
void expect_condition_event(const boost::json::object& event) {
  for (const char* key : {"time", "kind", "trial", "rule_configuration", "rule", "global_step",
                          "mode", "mode_step", "tensors", "figures", "message"}) {
    EXPECT_TRUE(event.contains(key)) << key << " missing in " << boost::json::serialize(event);
  }
  static const std::regex iso8601(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
  EXPECT_TRUE(std::regex_match(std::string(event.at("time").as_string()), iso8601))
      << event.at("time");
  EXPECT_EQ(event.at("kind"), "condition_met");
  EXPECT_TRUE(event.at("global_step").is_int64());
  EXPECT_TRUE(event.at("mode_step").is_int64());
  EXPECT_TRUE(event.at("tensors").is_array());
  EXPECT_FALSE(event.at("tensors").as_array().empty());
  EXPECT_TRUE(event.at("figures").is_array());
  EXPECT_FALSE(event.at("message").as_string().empty());
}

// The status a rule reports at the end of the trial.
void expect_status_event(const boost::json::object& event, const std::string& configuration,
                         const std::string& status, std::int64_t evaluated, std::int64_t fired) {
  EXPECT_EQ(event.at("kind"), "status") << boost::json::serialize(event);
  EXPECT_EQ(event.at("rule_configuration"), configuration.c_str());
  EXPECT_EQ(event.at("status"), status.c_str());
  EXPECT_EQ(event.at("steps_evaluated"), evaluated);
  EXPECT_EQ(event.at("times_fired"), fired);
}

std::string quoted(const std::string& text) {
  return "'" + text + "'";
}

// --- replay: what it prints ------------------------------------------------------------------

TEST(ReplayCli, TextLinesNameTheRuleAndTheSteps) {
  TempDir dir;
  const auto job = simulate(dir.path() / "vg", JobScenario::VanishingGradients);
  const Outcome outcome = replay({job, "--rule", "VanishingGradient"});
  ASSERT_EQ(outcome.exit_code, cli::kExitRuleFired) << outcome.err;

  const auto lines = lines_of(outcome.out);
  ASSERT_EQ(lines.size(), 7u) << outcome.out;
  for (std::int64_t step = 6; step < 12; ++step) {
    const std::string& line = lines[static_cast<std::size_t>(step - 6)];
    const std::string where = "VanishingGradient fired at step " + std::to_string(step) +
                              " (TRAIN " + std::to_string(step) + ") on vg: ";
    EXPECT_NE(line.find(where), std::string::npos) << line;
    EXPECT_NE(line.find("< threshold 1e-07"), std::string::npos) << line;
  }
  EXPECT_NE(lines.back().find("VanishingGradient on vg: IssuesFound (fired 6 times in 12 steps "
                              "evaluated)"),
            std::string::npos)
      << lines.back();

  // The summary goes to stderr, never among the events.
  EXPECT_NE(outcome.err.find("rulestream replay: 12 steps (0 incomplete), 12 index files"),
            std::string::npos)
      << outcome.err;
  EXPECT_NE(outcome.err.find("VanishingGradient (VanishingGradient): IssuesFound, fired 6 times "
                             "in 12 steps evaluated"),
            std::string::npos)
      << outcome.err;
  // No progress line (escape codes) when stderr is captured.
  EXPECT_EQ(outcome.err.find('\r'), std::string::npos);
}

TEST(ReplayCli, JsonLinesHaveTheDocumentedKeysAndEndWithStatuses) {
  TempDir dir;
  const auto job = simulate(dir.path() / "vg", JobScenario::VanishingGradients);
  for (const std::vector<std::string>& format : {std::vector<std::string>{"--sink", "stdout:json"},
                                                 std::vector<std::string>{"--format", "json"}}) {
    std::vector<std::string> args{job, "--rule", "VanishingGradient:name=VG", "--rule",
                                  "ExplodingTensor"};
    args.insert(args.end(), format.begin(), format.end());
    const Outcome outcome = replay(args);
    ASSERT_EQ(outcome.exit_code, cli::kExitRuleFired) << outcome.err;
    const auto events = json_lines(outcome.out);
    ASSERT_EQ(events.size(), 8u) << outcome.out;

    for (std::size_t i = 0; i < 6; ++i) {
      const auto& event = events[i];
      expect_condition_event(event);
      EXPECT_EQ(event.at("trial"), "vg");
      EXPECT_EQ(event.at("rule_configuration"), "VG");
      EXPECT_EQ(event.at("rule"), "VanishingGradient");
      EXPECT_EQ(event.at("global_step"), static_cast<std::int64_t>(6 + i));
      EXPECT_EQ(event.at("mode"), "TRAIN");
      EXPECT_EQ(event.at("mode_step"), event.at("global_step"));
      for (const auto& tensor : event.at("tensors").as_array()) {
        EXPECT_TRUE(tensor.as_string().starts_with("gradient/")) << tensor;
      }
      // Each vanishing gradient's abs mean, then the threshold it fell below.
      const auto& figures = event.at("figures").as_array();
      ASSERT_EQ(figures.size(), event.at("tensors").as_array().size() + 1);
      for (std::size_t f = 0; f + 1 < figures.size(); ++f) {
        const auto& figure = figures[f].as_object();
        EXPECT_EQ(figure.at("name"), "abs_mean");
        EXPECT_LT(figure.at("value").to_number<double>(), 1e-7);
        EXPECT_EQ(figure.at("tensor"), event.at("tensors").as_array()[f]);
      }
      EXPECT_EQ(figures.back().as_object().at("name"), "threshold");
      EXPECT_EQ(figures.back().as_object().at("value").to_number<double>(), 1e-7);
    }
    // One status per rule, in configuration order, after every condition.
    expect_status_event(events[6], "VG", "IssuesFound", 12, 6);
    EXPECT_EQ(events[6].at("rule"), "VanishingGradient");
    expect_status_event(events[7], "ExplodingTensor", "NoIssuesFound", 12, 0);
    EXPECT_EQ(events[7].at("trial"), "vg");
  }
}

TEST(ReplayCli, AHealthyJobExitsZero) {
  TempDir dir;
  const auto job = simulate(dir.path() / "fine", JobScenario::Healthy);
  const Outcome outcome =
      replay({job, "--rule", "VanishingGradient", "--rule", "ExplodingTensor", "--format", "json"});
  EXPECT_EQ(outcome.exit_code, cli::kExitOk) << outcome.err;
  const auto events = json_lines(outcome.out);
  ASSERT_EQ(events.size(), 2u) << outcome.out;
  expect_status_event(events[0], "VanishingGradient", "NoIssuesFound", 12, 0);
  expect_status_event(events[1], "ExplodingTensor", "NoIssuesFound", 12, 0);

  const Outcome text = replay({job, "--rule", "VanishingGradient"});
  EXPECT_EQ(text.exit_code, cli::kExitOk);
  EXPECT_NE(text.out.find("VanishingGradient on fine: NoIssuesFound (fired 0 times in 12 steps "
                          "evaluated)"),
            std::string::npos)
      << text.out;
}

// --max-memory reaches the pipeline: a compressed event file is inflated whole, within that
// budget. Each file here inflates to about 3.2 MB (two weights of 400,000 floats and their
// gradients' share): refused under 1 MB, with a problem naming the option and the rule in
// Error (never an all-clear), and read under 64 MB.
TEST(ReplayCli, MaxMemoryBoundsWhatACompressedEventFileMayInflateTo) {
  TempDir dir;
  JobSimulatorOptions options;
  options.output = dir.path() / "gz";
  options.scenario = JobScenario::Healthy;
  options.steps = 3;
  options.tensor_size = 400'000;
  options.compression = Compression::Gzip;
  JobSimulator(options).run();
  const std::string job = options.output.string();

  const Outcome small = replay({job, "--rule", "VanishingGradient", "--format", "json",
                                "--progress", "off", "--max-memory", "1"});
  EXPECT_NE(small.exit_code, cli::kExitOk) << small.err;
  EXPECT_NE(small.err.find("the memory budget"), std::string::npos) << small.err;
  EXPECT_NE(small.err.find("--max-memory"), std::string::npos) << small.err;
  const auto small_events = json_lines(small.out);
  ASSERT_FALSE(small_events.empty()) << small.out;
  EXPECT_EQ(small_events.back().at("status"), "Error") << small.out;

  const Outcome large = replay({job, "--rule", "VanishingGradient", "--format", "json",
                                "--progress", "off", "--max-memory", "64"});
  EXPECT_EQ(large.exit_code, cli::kExitOk) << large.err;
  EXPECT_EQ(large.err.find("the memory budget"), std::string::npos) << large.err;
  const auto large_events = json_lines(large.out);
  ASSERT_EQ(large_events.size(), 1u) << large.out;
  expect_status_event(large_events[0], "VanishingGradient", "NoIssuesFound", 3, 0);
}

TEST(ReplayCli, StartAndEndStepBoundTheStepsEvaluated) {
  TempDir dir;
  const auto job = simulate(dir.path() / "vg", JobScenario::VanishingGradients);
  const Outcome bounded = replay({job, "--rule", "VanishingGradient", "--format", "json",
                                  "--start-step", "4", "--end-step", "8"});
  ASSERT_EQ(bounded.exit_code, cli::kExitRuleFired) << bounded.err;
  const auto events = json_lines(bounded.out);
  EXPECT_EQ(fired_steps(events), (Steps{6, 7}));
  ASSERT_FALSE(events.empty());
  expect_status_event(events.back(), "VanishingGradient", "IssuesFound", 4, 2);

  // Before the fault only: nothing fires.
  const Outcome before = replay({job, "--rule", "VanishingGradient", "--end-step", "6"});
  EXPECT_EQ(before.exit_code, cli::kExitOk) << before.out;
  EXPECT_NE(before.out.find("fired 0 times in 6 steps evaluated"), std::string::npos) << before.out;

  const Outcome from =
      replay({job, "--rule", "VanishingGradient", "--format", "json", "--start-step", "10"});
  EXPECT_EQ(fired_steps(json_lines(from.out)), (Steps{10, 11}));
}

// --- sinks -----------------------------------------------------------------------------------

TEST(ReplayCli, FileSinkAppendsJsonLinesAndNeverTruncates) {
  TempDir dir;
  const auto job = simulate(dir.path() / "vg", JobScenario::VanishingGradients);
  const auto events_path = (dir.path() / "events.jsonl").string();

  const Outcome first =
      replay({job, "--rule", "VanishingGradient", "--sink", "file:" + events_path});
  ASSERT_EQ(first.exit_code, cli::kExitRuleFired) << first.err;
  // --sink replaces the default stdout sink.
  EXPECT_TRUE(first.out.empty()) << first.out;
  const std::string after_first = testing::read_text_file(events_path);
  const auto events = json_lines(after_first);
  ASSERT_EQ(events.size(), 7u) << after_first;
  EXPECT_EQ(fired_steps(events), steps_from(6, 12));
  for (std::size_t i = 0; i < 6; ++i) expect_condition_event(events[i]);
  expect_status_event(events.back(), "VanishingGradient", "IssuesFound", 12, 6);

  const Outcome second =
      replay({job, "--rule", "VanishingGradient", "--sink", "file:" + events_path});
  ASSERT_EQ(second.exit_code, cli::kExitRuleFired) << second.err;
  const std::string after_second = testing::read_text_file(events_path);
  EXPECT_TRUE(after_second.starts_with(after_first));
  EXPECT_EQ(json_lines(after_second).size(), 14u);
}

TEST(ReplayCli, StdoutAndFileSinksGetTheSameEvents) {
  TempDir dir;
  const auto job = simulate(dir.path() / "vg", JobScenario::VanishingGradients);
  const auto events_path = (dir.path() / "events.jsonl").string();
  const Outcome outcome = replay({job, "--rule", "VanishingGradient", "--sink", "stdout:json",
                                  "--sink", "file:" + events_path});
  ASSERT_EQ(outcome.exit_code, cli::kExitRuleFired) << outcome.err;
  EXPECT_EQ(lines_of(outcome.out).size(), 7u);
  EXPECT_EQ(testing::read_text_file(events_path), outcome.out);
}

TEST(ReplayCli, AnUnwritableFileSinkIsAOneLineError) {
  TempDir dir;
  const auto job = simulate(dir.path() / "vg", JobScenario::VanishingGradients);
  const auto missing_folder = (dir.path() / "no-such-folder" / "events.jsonl").string();
  expect_one_line_error(
      replay({job, "--rule", "VanishingGradient", "--sink", "file:" + missing_folder}),
      {missing_folder, "No such file or directory"});
  // A folder where the file should be.
  expect_one_line_error(replay({job, "--rule", "VanishingGradient", "--sink", "stdout", "--sink",
                                "file:" + dir.path().string()}),
                        {dir.path().string(), "Is a directory"});
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "no-such-folder"));
}

// A configuration error comes first: no file sink is created and no trial is looked at (the
// trial path here does not even exist, and the configuration error is what the user hears).
TEST(ReplayCli, ConfigurationErrorsComeBeforeAnySinkFileOrAnyRead) {
  TempDir dir;
  const auto events = dir.path() / "events.jsonl";
  const auto no_trial = (dir.path() / "no-such-trial").string();
  expect_one_line_error(replay({no_trial, "--rule", "VanishingGradient:threshold=abc", "--sink",
                                "file:" + events.string()}),
                        {"rule VanishingGradient: parameter threshold: \"abc\" is not a number"});
  EXPECT_FALSE(std::filesystem::exists(events));
  expect_one_line_error(
      replay({no_trial, "--rule", "StalledTrainingRule:stop_training_on_fire=True", "--sink",
              "file:" + events.string()}),
      {"stop_training_on_fire is True, but no stop action is configured"});
  EXPECT_FALSE(std::filesystem::exists(events));
  // The same configuration on a good path does run.
  const auto job = simulate(dir.path() / "vg", JobScenario::VanishingGradients);
  EXPECT_EQ(
      replay({job, "--rule", "VanishingGradient", "--sink", "file:" + events.string()}).exit_code,
      cli::kExitRuleFired);
  EXPECT_TRUE(std::filesystem::exists(events));
}

// --- --rules FILE ----------------------------------------------------------------------------

TEST(ReplayCli, RulesFileInSageMakersShapeWithSinks) {
  TempDir dir;
  const auto job = simulate(dir.path() / "vg", JobScenario::VanishingGradients);
  const auto events_path = (dir.path() / "events.jsonl").string();
  const auto rules_path = dir.path() / "rules.json";
  testing::write_text_file(rules_path, R"({
    "rules": [{"RuleConfigurationName": "VG", "InstanceType": "ml.t3.medium",
               "RuleParameters": {"rule_to_invoke": "VanishingGradient", "threshold": "1e-7"}}],
    "sinks": [{"type": "file", "path": ")" +
                                           events_path + R"("},
              {"type": "stdout", "format": "json"}]})");
  const Outcome outcome = replay({job, "--rules", rules_path.string()});
  ASSERT_EQ(outcome.exit_code, cli::kExitRuleFired) << outcome.err;
  const auto events = json_lines(outcome.out);
  EXPECT_EQ(fired_steps(events, "VG"), steps_from(6, 12));
  ASSERT_EQ(events.size(), 7u);
  expect_status_event(events.back(), "VG", "IssuesFound", 12, 6);
  EXPECT_EQ(testing::read_text_file(events_path), outcome.out);
}

TEST(ReplayCli, RulesFileDebugRuleConfigurationsWithANumberParameter) {
  TempDir dir;
  const auto job = simulate(dir.path() / "vg", JobScenario::VanishingGradients);
  const auto rules_path = dir.path() / "job.json";
  // A threshold below the vanished gradients (~1e-10): the number reached the rule, or the
  // default 1e-7 would have fired.
  testing::write_text_file(rules_path, R"({"DebugRuleConfigurations": [
      {"RuleConfigurationName": "Strict",
       "RuleParameters": {"rule_to_invoke": "vanishing_gradient", "threshold": 1e-12}}]})");
  const Outcome outcome = replay({job, "--rules", rules_path.string(), "--format", "json"});
  EXPECT_EQ(outcome.exit_code, cli::kExitOk) << outcome.err;
  const auto events = json_lines(outcome.out);
  ASSERT_EQ(events.size(), 1u) << outcome.out;
  expect_status_event(events[0], "Strict", "NoIssuesFound", 12, 0);
  EXPECT_EQ(events[0].at("rule"), "VanishingGradient");
}

TEST(ReplayCli, RulesFileBareArrayWithBooleanParameters) {
  TempDir dir;
  const auto job = simulate(dir.path() / "boom", JobScenario::Exploding);
  const auto rules_path = dir.path() / "rules.json";
  // Exploding from step 6: infinities at step 7, NaN from step 8.
  testing::write_text_file(rules_path, R"([
      {"RuleConfigurationName": "NaNOnly",
       "RuleParameters": {"rule_to_invoke": "ExplodingTensor", "only_nan": true}},
      {"RuleConfigurationName": "Any",
       "RuleParameters": {"rule_to_invoke": "ExplodingTensor", "only_nan": false}}])");
  const Outcome outcome = replay({job, "--rules", rules_path.string(), "--format", "json"});
  ASSERT_EQ(outcome.exit_code, cli::kExitRuleFired) << outcome.err;
  const auto events = json_lines(outcome.out);
  EXPECT_EQ(fired_steps(events, "NaNOnly"), steps_from(8, 12));
  EXPECT_EQ(fired_steps(events, "Any"), steps_from(7, 12));
}

TEST(ReplayCli, RulesFileAndRuleArgumentsAddUp) {
  TempDir dir;
  const auto job = simulate(dir.path() / "vg", JobScenario::VanishingGradients);
  const auto rules_path = dir.path() / "rules.json";
  testing::write_text_file(rules_path,
                           R"([{"RuleParameters": {"rule_to_invoke": "ExplodingTensor"}}])");
  const Outcome outcome = replay(
      {job, "--rules", rules_path.string(), "--rule", "VanishingGradient", "--format", "json"});
  ASSERT_EQ(outcome.exit_code, cli::kExitRuleFired) << outcome.err;
  const auto events = json_lines(outcome.out);
  ASSERT_GE(events.size(), 2u);
  expect_status_event(events[events.size() - 2], "ExplodingTensor", "NoIssuesFound", 12, 0);
  expect_status_event(events.back(), "VanishingGradient", "IssuesFound", 12, 6);
}

TEST(ReplayCli, RulesFileErrorsNameTheFile) {
  TempDir dir;
  const auto job = simulate(dir.path() / "vg", JobScenario::VanishingGradients);
  const auto rules_path = (dir.path() / "rules.json").string();

  testing::write_text_file(rules_path, "{\"rules\": [\n  {\"RuleParameters\": }]}");
  expect_one_line_error(replay({job, "--rules", rules_path}),
                        {rules_path + ": malformed JSON at line 2, column"});

  testing::write_text_file(
      rules_path, R"([{"RuleConfigurationName": "VG", "RuleParameters": {"threshold": "1"}}])");
  expect_one_line_error(replay({job, "--rules", rules_path}),
                        {rules_path + ": rule 0", "rule_to_invoke is missing"});

  testing::write_text_file(rules_path,
                           R"({"rules": [{"RuleParameters": {"rule_to_invoke": "AllZero"}}],
                                          "sinks": [{"type": "carrier-pigeon"}]})");
  expect_one_line_error(replay({job, "--rules", rules_path}),
                        {rules_path + ": sink 0", "unknown sink type 'carrier-pigeon'"});

  // A bad parameter in the file is reported as the rule reports it.
  testing::write_text_file(rules_path, R"([{"RuleParameters": {"rule_to_invoke": "AllZero",
                                                                 "threshold": "lots"}}])");
  expect_one_line_error(replay({job, "--rules", rules_path}),
                        {"rule AllZero", "parameter threshold", "\"lots\""});

  const auto missing = (dir.path() / "missing.json").string();
  expect_one_line_error(replay({job, "--rules", missing}), {missing});
}

// --- --rule NAME:key=value -------------------------------------------------------------------

TEST(ReplayCli, RuleArgumentParametersReachTheRule) {
  TempDir dir;
  const auto job = simulate(dir.path() / "vg", JobScenario::VanishingGradients);
  const Outcome strict =
      replay({job, "--rule", "vanishing_gradient:threshold=1e-12,name=Strict", "--format", "json"});
  EXPECT_EQ(strict.exit_code, cli::kExitOk) << strict.err;
  const auto events = json_lines(strict.out);
  ASSERT_EQ(events.size(), 1u) << strict.out;
  expect_status_event(events[0], "Strict", "NoIssuesFound", 12, 0);

  // A list value keeps its commas: two collections, then another parameter.
  const TempDir other;
  const auto exploding = simulate(other.path() / "boom", JobScenario::Exploding);
  const Outcome listed =
      replay({exploding, "--rule", "ExplodingTensor:collection_names=losses,biases,only_nan=True",
              "--format", "json"});
  ASSERT_EQ(listed.exit_code, cli::kExitRuleFired) << listed.err;
  const auto fired = json_lines(listed.out);
  EXPECT_EQ(fired_steps(fired), steps_from(8, 12));
  bool saw_loss = false;
  bool saw_bias = false;
  for (const auto& event : fired) {
    if (event.at("kind") != "condition_met") continue;
    for (const auto& tensor : event.at("tensors").as_array()) {
      const std::string name(tensor.as_string());
      saw_loss = saw_loss || name == "CrossEntropyLoss_output_0";
      saw_bias = saw_bias || name.ends_with(".bias");
      EXPECT_TRUE(name == "CrossEntropyLoss_output_0" || name.ends_with(".bias")) << name;
    }
  }
  EXPECT_TRUE(saw_loss) << listed.out;
  EXPECT_TRUE(saw_bias) << listed.out;
}

TEST(ReplayCli, BadRuleArgumentsAreOneLineErrors) {
  TempDir dir;
  const auto job = simulate(dir.path() / "vg", JobScenario::VanishingGradients);
  expect_one_line_error(replay({job, "--rule", "VanishingGradients2"}),
                        {"unknown rule \"VanishingGradients2\"", "AllZero", "ExplodingTensor",
                         "LossNotDecreasing", "VanishingGradient"});
  expect_one_line_error(replay({job, "--rule", "VanishingGradient:thresh=1"}),
                        {"rule VanishingGradient", "unknown parameter \"thresh\"", "threshold"});
  expect_one_line_error(replay({job, "--rule", "VanishingGradient:threshold=abc"}),
                        {"rule VanishingGradient: parameter threshold: \"abc\" is not a number"});
  expect_one_line_error(replay({job, "--rule", "ExplodingTensor:only_nan=maybe"}),
                        {"rule ExplodingTensor", "parameter only_nan", "\"maybe\""});
  expect_one_line_error(replay({job, "--rule", "AllZero:tensor_regex=("}),
                        {"rule AllZero", "parameter tensor_regex", "\"(\"", "regex"});
  expect_one_line_error(replay({job, "--rule", "VanishingGradient:threshold"}),
                        {"--rule 'VanishingGradient:threshold'", "expected key=value"});
  expect_one_line_error(replay({job, "--rule", ":threshold=1"}), {"no rule name"});
}

TEST(ReplayCli, BadCommandLinesAreOneLineErrors) {
  TempDir dir;
  const auto job = simulate(dir.path() / "vg", JobScenario::VanishingGradients);
  expect_one_line_error(replay({job}), {"no rules", "'rulestream rules'"});
  expect_one_line_error(replay({"--rule", "VanishingGradient"}), {"missing PATH"});
  expect_one_line_error(replay({job, "--rule", "VanishingGradient", "--format", "yaml"}),
                        {"--format", "'yaml'"});
  expect_one_line_error(replay({job, "--rule", "VanishingGradient", "--sink", "stdout:xml"}),
                        {"'xml'"});
  expect_one_line_error(replay({job, "--rule", "VanishingGradient", "--sink", "pigeon:coop"}),
                        {"--sink 'pigeon'", "unknown sink"});
  expect_one_line_error(replay({job, "--rule", "VanishingGradient", "--progress", "sometimes"}),
                        {"--progress"});
  expect_one_line_error(replay({job, "--rule", "VanishingGradient", "--start-step", "ten"}),
                        {"ten"});
  expect_one_line_error(replay({job, "--rule", "VanishingGradient", "--bogus"}), {"bogus"});
  expect_one_line_error(run_cli("watch", {job}), {"no rules"}, "watch");
}

// --- stopping training ------------------------------------------------------------------------

// A healthy 12-step job whose step 6 arrived 2000 s after step 5 (the index files' times).
std::string stalled_job(const std::filesystem::path& output) {
  const std::string job = simulate(output, JobScenario::Healthy);
  std::vector<std::int64_t> offsets;
  for (std::int64_t step = 0; step < 12; ++step)
    offsets.push_back(10 * step + (step >= 6 ? 2000 : 0));
  testing::stamp_index_files(output, std::chrono::system_clock::now() - std::chrono::hours(2),
                             offsets);
  return job;
}

TEST(ReplayCli, StopTrainingOnFireRunsTheStopCommandOnce) {
  TempDir dir;
  const auto job = stalled_job(dir.path() / "stalled");
  const auto log = dir.path() / "stopped.txt";
  const Outcome outcome = replay(
      {job, "--format", "json", "--rule",
       "StalledTrainingRule:name=Stalled,stop_training_on_fire=True,threshold=600", "--rule",
       "StalledTrainingRule:name=Watching,threshold=1", "--stop-command",
       "echo \"$RULESTREAM_RULE_CONFIGURATION $RULESTREAM_STEP\" >> " + quoted(log.string())});
  EXPECT_EQ(outcome.exit_code, cli::kExitRuleFired) << outcome.err;
  const auto events = json_lines(outcome.out);
  EXPECT_EQ(fired_steps(events, "Stalled"), Steps{6});
  EXPECT_EQ(fired_steps(events, "Watching").size(), 11u);
  EXPECT_EQ(testing::read_text_file(log), "Stalled 6\n") << "only the rule that asks to stop, once";
  EXPECT_NE(outcome.err.find("Stalled (StalledTrainingRule): IssuesFound, fired 1 times in 12 "
                             "steps evaluated - ran `echo"),
            std::string::npos)
      << outcome.err;
}

TEST(ReplayCli, StopTrainingOnFireWithoutAStopIsAOneLineError) {
  TempDir dir;
  const auto job = stalled_job(dir.path() / "stalled");
  expect_one_line_error(
      replay({job, "--rule", "StalledTrainingRule:name=Stalled,stop_training_on_fire=True"}),
      {"rule configuration Stalled (StalledTrainingRule)", "stop_training_on_fire",
       "no stop action", "--stop-pid", "--stop-command"});
  expect_one_line_error(replay({job, "--rule", "StalledTrainingRule", "--stop-pid", "0"}),
                        {"--stop-pid", "positive"});
  expect_one_line_error(replay({job, "--rule", "StalledTrainingRule", "--stop-pid", "12",
                                "--stop-signal", "SIGNOPE"}),
                        {"--stop-signal", "unknown signal 'SIGNOPE'"});
  expect_one_line_error(replay({job, "--rule", "StalledTrainingRule", "--stop-signal", "SIGINT"}),
                        {"--stop-signal goes with --stop-pid"});
}

TEST(ReplayCli, RulesFileActionsStopAndNotify) {
  TempDir dir;
  const auto job = stalled_job(dir.path() / "stalled");
  const auto log = dir.path() / "stopped.txt";
  const auto paged = dir.path() / "paged.jsonl";
  const auto rules = dir.path() / "rules.json";
  testing::write_text_file(rules, R"({"rules": [{"RuleConfigurationName": "Stalled",
                            "RuleParameters": {"rule_to_invoke": "StalledTrainingRule",
                                               "threshold": "600",
                                               "stop_training_on_fire": "True"},
                            "Actions": [{"type": "stop", "command": "touch )" +
                                      log.string() + R"("},
                                        {"type": "notify", "sinks": ["pager"]}]},
                           {"RuleConfigurationName": "Fast",
                            "RuleParameters": {"rule_to_invoke": "StalledTrainingRule",
                                               "threshold": "1"}}],
                 "sinks": [{"type": "stdout", "format": "json"},
                           {"type": "file", "path": ")" +
                                      paged.string() + R"(", "name": "pager"}]})");
  const Outcome outcome = replay({job, "--rules", rules.string()});
  EXPECT_EQ(outcome.exit_code, cli::kExitRuleFired) << outcome.err;
  EXPECT_TRUE(std::filesystem::exists(log));
  EXPECT_EQ(fired_steps(json_lines(outcome.out), "Stalled"), Steps{6});
  EXPECT_EQ(fired_steps(json_lines(outcome.out), "Fast").size(), 11u);
  const auto paged_events = json_lines(testing::read_text_file(paged));
  EXPECT_EQ(fired_steps(paged_events), Steps{6}) << "the pager gets the stall alone";
  ASSERT_EQ(paged_events.size(), 2u);
  expect_status_event(paged_events[1], "Stalled", "IssuesFound", 12, 1);

  testing::write_text_file(rules, R"({"rules": [{"RuleConfigurationName": "Stalled",
                            "RuleParameters": {"rule_to_invoke": "StalledTrainingRule"},
                            "Actions": [{"type": "notify", "sinks": ["pagr"]}]}]})");
  expect_one_line_error(replay({job, "--rules", rules.string()}),
                        {"rule configuration Stalled", "no sink named 'pagr'", "stdout"});
  testing::write_text_file(rules, R"({"rules": [{"RuleConfigurationName": "Stalled",
                            "RuleParameters": {"rule_to_invoke": "StalledTrainingRule"},
                            "Actions": [{"type": "stop"}]}]})");
  expect_one_line_error(replay({job, "--rules", rules.string()}),
                        {rules.string(), "rule 0 (Stalled) action 0", "pid", "command"});
}

TEST(ReplayCli, PathsThatAreNoTrialAreOneLineErrors) {
  TempDir dir;
  const auto missing = (dir.path() / "nowhere").string();
  expect_one_line_error(replay({missing, "--rule", "VanishingGradient"}),
                        {missing, "no such trial folder"});
  expect_one_line_error(run_cli("watch", {missing, "--rule", "VanishingGradient"}),
                        {missing, "no such trial folder"}, "watch");

  // A folder with files, none of them a trial's: replaying it must not pass as NoIssuesFound.
  const auto notes = dir.path() / "notes";
  testing::write_text_file(notes / "readme.txt", "not a training job");
  std::filesystem::create_directories(notes / "checkpoints");
  expect_one_line_error(replay({notes.string(), "--rule", "VanishingGradient"}),
                        {notes.string(), "not an smdebug trial"});

  const auto file = notes / "readme.txt";
  expect_one_line_error(replay({file.string(), "--rule", "VanishingGradient"}), {file.string()});

  // The base trial is checked before any sink is opened.
  const auto events_path = dir.path() / "events.jsonl";
  expect_one_line_error(replay({notes.string(), "--rule", "VanishingGradient", "--sink",
                                "file:" + events_path.string()}),
                        {"not an smdebug trial"});
  EXPECT_FALSE(std::filesystem::exists(events_path));
}

TEST(ReplayCli, HelpDescribesTheOptions) {
  for (const std::string command : {"replay", "watch"}) {
    const Outcome outcome = run_cli(command, {"--help"});
    EXPECT_EQ(outcome.exit_code, cli::kExitOk);
    for (const char* text :
         {"--rules", "--rule", "--sink", "--format", "--start-step", "--end-step", "Exit status"}) {
      EXPECT_NE(outcome.out.find(text), std::string::npos) << command << ": " << text;
    }
  }
}

// --- the real binary -------------------------------------------------------------------------

std::string binary() {
  return quoted(testing::rulestream_binary().string());
}

TEST(ReplayBinary, PrintsJsonEventsOnStdoutAndTheSummaryOnStderr) {
  TempDir dir;
  const auto job = simulate(dir.path() / "vg", JobScenario::VanishingGradients);
  const auto result = testing::run_command(binary() + " replay " + quoted(job) +
                                           " --rule VanishingGradient --format json");
  ASSERT_EQ(result.exit_code, cli::kExitRuleFired) << result.err;
  const auto events = json_lines(result.out);
  EXPECT_EQ(fired_steps(events), steps_from(6, 12));
  ASSERT_FALSE(events.empty());
  expect_status_event(events.back(), "VanishingGradient", "IssuesFound", 12, 6);
  EXPECT_TRUE(result.err.starts_with("rulestream replay: 12 steps")) << result.err;
}

TEST(ReplayBinary, AnEmptyFolderIsAnErrorNotAHang) {
  TempDir dir;
  // timeout(1) exits 124 if the replay hangs.
  const auto result =
      testing::run_command("timeout 20 " + binary() + " replay " + quoted(dir.path().string()) +
                           " --rule VanishingGradient");
  EXPECT_EQ(result.exit_code, cli::kExitError) << result.err;
  EXPECT_TRUE(result.out.empty()) << result.out;
  EXPECT_EQ(result.err,
            "rulestream replay: " + dir.path().string() +
                ": not an smdebug trial (no collections/, index/ or events/ files), nor a "
                "TensorBoard logdir (no file named *tfevents*), nor a folder of text metrics (no "
                "trainer_state.json, *.csv or JSON lines)\n");
}

// Complete lines only: a line still being written is not an event yet.
std::vector<boost::json::object> complete_json_lines(const std::string& text) {
  return json_lines(text.substr(0, text.rfind('\n') + 1));
}

bool has_event_at(const std::string& out, std::int64_t step) {
  const Steps steps = fired_steps(complete_json_lines(out));
  return std::find(steps.begin(), steps.end(), step) != steps.end();
}

// A job written step by step (20 ms apart) into `job`, an empty folder a watch follows.
JobSimulatorOptions live_job(const std::filesystem::path& job, JobScenario scenario,
                             std::int64_t steps, bool end_marker) {
  JobSimulatorOptions options;
  options.output = job;
  options.scenario = scenario;
  options.steps = steps;
  options.tensor_size = 16;
  if (scenario != JobScenario::Healthy) options.fault_step = 6;
  options.write_end_marker = end_marker;
  options.step_delay = std::chrono::milliseconds(20);
  return options;
}

std::filesystem::path empty_job_folder(const TempDir& dir, const std::string& name) {
  const auto job = dir.path() / name;
  std::filesystem::create_directories(job);
  return job;
}

TEST(WatchBinary, FollowsAJobAsItIsWrittenAndStopsAtTheEndMarker) {
  TempDir dir;
  const auto job = empty_job_folder(dir, "live");
  ChildProcess watch({testing::rulestream_binary().string(), "watch", job.string(), "--rule",
                      "ExplodingTensor", "--sink", "stdout:json"});

  // Exploding from step 6: the first event is at step 7 (infinities). The job waits after
  // writing step 7 until that event is out: it must come while the job is running, with no
  // later step and no end marker on disk.
  bool live_event = false;
  std::int64_t last_written = -1;
  JobSimulatorOptions options = live_job(job, JobScenario::Exploding, 16, true);
  options.on_step_written = [&](const SimulatedStep& step) {
    last_written = step.global_step;
    if (step.global_step != 7) return;
    live_event =
        watch.read_until([&] { return has_event_at(watch.out(), 7); }, Clock::now() + kPatience);
  };
  JobSimulator(options).run();
  EXPECT_EQ(last_written, 15);
  EXPECT_TRUE(live_event) << "no event for step 7 while the job was being written; stdout:\n"
                          << watch.out() << "\nstderr:\n"
                          << watch.err();

  // The end marker ends the watch by itself.
  const auto exit_code = watch.wait_for_exit(Clock::now() + kPatience);
  ASSERT_TRUE(exit_code.has_value()) << "watch did not stop after the end marker; stderr:\n"
                                     << watch.err();
  EXPECT_EQ(*exit_code, cli::kExitRuleFired) << watch.err();
  const auto events = json_lines(watch.out());
  EXPECT_EQ(fired_steps(events), steps_from(7, 16));
  ASSERT_FALSE(events.empty());
  expect_status_event(events.back(), "ExplodingTensor", "IssuesFound", 16, 9);
  EXPECT_NE(watch.err().find("rulestream watch: 16 steps (0 incomplete)"), std::string::npos)
      << watch.err();
  EXPECT_NE(watch.err().find("ExplodingTensor (ExplodingTensor): IssuesFound"), std::string::npos)
      << watch.err();
}

// A watch started before the job writes anything sees its first files as they land, not at the
// next poll: with a poll of 30 s here, the first step's event comes within seconds. Before, the
// format was looked for at every poll, and the first events came a poll late.
TEST(WatchBinary, AWatchStartedBeforeTheJobSeesItsFirstFilesAsTheyLand) {
  TempDir dir;
  const auto job = empty_job_folder(dir, "not-yet");
  ChildProcess watch({testing::rulestream_binary().string(), "watch", job.string(), "--rule",
                      "ExplodingTensor", "--sink", "stdout:json", "--poll-interval", "30"});
  ASSERT_TRUE(watch.read_until(
      [&] { return watch.err().find("waiting for the job to appear") != std::string::npos; },
      Clock::now() + kPatience))
      << watch.err();
  const auto written = Clock::now();
  JobSimulatorOptions options = live_job(job, JobScenario::Exploding, 8, /*end_marker=*/false);
  options.step_delay = std::chrono::milliseconds(0);
  JobSimulator(options).run();
  ASSERT_TRUE(
      watch.read_until([&] { return has_event_at(watch.out(), 7); }, Clock::now() + kPatience))
      << watch.out() << watch.err();
  EXPECT_LT(Clock::now() - written, std::chrono::seconds(10)) << watch.err();
  watch.signal(SIGINT);
  EXPECT_TRUE(watch.wait_for_exit(Clock::now() + kPatience).has_value());
}

TEST(WatchBinary, InterruptDrainsAndReportsAJobWithoutEndMarker) {
  TempDir dir;
  const auto job = empty_job_folder(dir, "running");
  ChildProcess watch({testing::rulestream_binary().string(), "watch", job.string(), "--rule",
                      "ExplodingTensor", "--format", "json"});
  JobSimulator(live_job(job, JobScenario::Exploding, 12, /*end_marker=*/false)).run();
  // Every step evaluated: the last one fired.
  ASSERT_TRUE(
      watch.read_until([&] { return has_event_at(watch.out(), 11); }, Clock::now() + kPatience))
      << watch.out() << watch.err();
  // Without an end marker the watch keeps following.
  ::usleep(200'000);
  ASSERT_TRUE(watch.running()) << watch.err();

  watch.signal(SIGINT);
  const auto exit_code = watch.wait_for_exit(Clock::now() + kPatience);
  ASSERT_TRUE(exit_code.has_value()) << "watch ignored SIGINT; stderr:\n" << watch.err();
  EXPECT_EQ(*exit_code, cli::kExitRuleFired) << watch.err();
  const auto events = json_lines(watch.out());
  EXPECT_EQ(fired_steps(events), steps_from(7, 12));
  ASSERT_FALSE(events.empty());
  expect_status_event(events.back(), "ExplodingTensor", "IssuesFound", 12, 5);
  EXPECT_NE(watch.err().find("rulestream watch: 12 steps (0 incomplete), 12 index files"),
            std::string::npos)
      << watch.err();
  EXPECT_NE(watch.err().find("  ExplodingTensor (ExplodingTensor): IssuesFound, fired 5 times in "
                             "12 steps evaluated"),
            std::string::npos)
      << watch.err();
}

// Waits for every step to go through the rules (the progress line says so), then interrupts.
// Returns the exit status, or nullopt after a failure.
std::optional<int> interrupt_when_all_released(ChildProcess& watch, int steps) {
  const std::string released = "  " + std::to_string(steps) + " steps  ";
  const bool all = watch.read_until([&] { return watch.err().find(released) != std::string::npos; },
                                    Clock::now() + kPatience);
  EXPECT_TRUE(all) << "steps were never released; stderr:\n" << watch.err();
  EXPECT_TRUE(watch.running()) << watch.err();
  if (!all || !watch.running()) return std::nullopt;
  watch.signal(SIGINT);
  const auto exit_code = watch.wait_for_exit(Clock::now() + kPatience);
  EXPECT_TRUE(exit_code.has_value()) << "watch ignored SIGINT; stderr:\n" << watch.err();
  return exit_code;
}

TEST(WatchBinary, InterruptWithNothingFiredExitsZero) {
  TempDir dir;
  const auto job = empty_job_folder(dir, "fine");
  ChildProcess watch({testing::rulestream_binary().string(), "watch", job.string(), "--rule",
                      "VanishingGradient", "--progress", "on"});
  JobSimulator(live_job(job, JobScenario::Healthy, 12, /*end_marker=*/false)).run();
  const auto exit_code = interrupt_when_all_released(watch, 12);
  ASSERT_TRUE(exit_code.has_value());
  EXPECT_EQ(*exit_code, cli::kExitOk) << watch.err();
  EXPECT_EQ(lines_of(watch.out()).size(), 1u) << watch.out();
  EXPECT_NE(watch.out().find("VanishingGradient on fine: NoIssuesFound (fired 0 times in 12 steps "
                             "evaluated)"),
            std::string::npos)
      << watch.out();
  EXPECT_NE(watch.err().find("rulestream watch: 12 steps (0 incomplete)"), std::string::npos)
      << watch.err();
  EXPECT_NE(watch.err().find("VanishingGradient (VanishingGradient): NoIssuesFound"),
            std::string::npos)
      << watch.err();
}

// A job already on disk (no end marker) when the watch starts: every step must reach the rules
// without waiting for a file that will never come. (Steps are held while the collections file
// loads; when it finishes after the last index file, the loader must nudge the assembler.)
TEST(WatchBinary, ReleasesEveryStepOfAJobWrittenBeforeItStarted) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    TempDir dir;
    const auto job =
        simulate(dir.path() / "written", JobScenario::Healthy, 12, 0, /*end_marker=*/false);
    ChildProcess watch({testing::rulestream_binary().string(), "watch", job, "--rule",
                        "VanishingGradient", "--progress", "on"});
    const auto exit_code = interrupt_when_all_released(watch, 12);
    ASSERT_TRUE(exit_code.has_value()) << "attempt " << attempt;
    EXPECT_EQ(*exit_code, cli::kExitOk) << watch.err();
  }
}

// A two-worker job of which only worker_0 writes (its step 0's gradient all zero): with
// --worker-grace the step goes to the rules that long after it landed, while the job runs, and
// the event says not every worker saved it; without, it waits for the missing worker.
TEST(WatchBinary, AWorkerGraceReleasesAStepWithoutItsSilentWorker) {
  for (const bool grace : {true, false}) {
    SCOPED_TRACE(grace ? "--worker-grace 0.3" : "no grace");
    TempDir dir;
    const auto job = empty_job_folder(dir, "half");
    const auto writer = testing::start_two_worker_job(job);
    std::vector<std::string> args = {testing::rulestream_binary().string(),
                                     "watch",
                                     job.string(),
                                     "--rule",
                                     "VanishingGradient",
                                     "--format",
                                     "json"};
    if (grace) args.insert(args.end(), {"--worker-grace", "0.3"});
    ChildProcess watch(args);
    writer->begin_step(0, Mode::Train, 0);
    writer->add_tensor("gradient/w", TensorValue::from_values(DType::Float32, {2},
                                                              std::vector<float>{0.0F, 0.0F}));
    writer->end_step();
    const bool released =
        watch.read_until([&] { return has_event_at(watch.out(), 0); },
                         Clock::now() + (grace ? kPatience : std::chrono::seconds(2)));
    EXPECT_EQ(released, grace) << watch.out() << watch.err();
    EXPECT_TRUE(watch.running()) << watch.err();
    if (grace) {
      EXPECT_NE(watch.out().find("not every worker"), std::string::npos) << watch.out();
    }
    watch.signal(SIGINT);
    EXPECT_TRUE(watch.wait_for_exit(Clock::now() + kPatience).has_value()) << watch.err();
  }
}

TEST(StreamCli, AWorkerGraceOutOfRangeIsNamed) {
  TempDir dir;
  const auto job = simulate(dir.path() / "job", JobScenario::Healthy, 2, 0, true);
  for (const std::string value : {"-1", "nan", "1e12"}) {
    testing::expect_one_line_error(
        replay({job, "--rule", "VanishingGradient", "--worker-grace", value}), "replay",
        {"--worker-grace must be a number of seconds from 0 to 31536000"});
  }
}

}  // namespace
}  // namespace rulestream
