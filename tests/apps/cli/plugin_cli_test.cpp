// --plugin on replay, watch and rules, and "plugins" in a rules file: a plugin's rules and
// sinks work as built-in ones do, and a plugin that cannot be loaded is a one-line error (exit
// status 2) naming the file and why. The working plugin is
// examples/custom_gradient_rule_plugin.cpp; the broken ones are tests/apps/cli/plugins/.
//
// A plugin resolves rulestream's symbols against the program that loads it, and this test
// program does not export them (the rulestream command does: CMakeLists.txt), so loads that
// must succeed run the built command; loads that fail before any rulestream symbol is needed
// run in-process.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "apps/simulator/job_simulator.hpp"
#include "engine/graph/plugin_api.hpp"
#include "tests/support/cli_runner.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::TempDir;

const std::filesystem::path kExamplePlugin = RULESTREAM_EXAMPLE_PLUGIN;
const std::filesystem::path kBrokenPlugins = RULESTREAM_TEST_PLUGINS_DIR;

std::string quoted(const std::filesystem::path& path) {
  return "'" + path.string() + "'";
}

testing::CommandResult run_rulestream(const std::string& args) {
  return testing::run_command(quoted(testing::rulestream_binary()) + " " + args);
}

// 20 TRAIN steps, every one saved, whose gradients explode at step 10 (JobScenario::Exploding):
// healthy gradients are N(0, 0.0125), abs mean ~0.01; at 10 they are x1e4 (abs mean ~100), at
// 11 every element is +-Inf, from 12 NaN. CustomGradientRule (threshold 20: abs mean > 20)
// fires at 10 and 11 only: NaN > 20 is false.
std::filesystem::path exploding_job(const TempDir& dir) {
  JobSimulatorOptions options;
  options.output = dir.path() / "exploding";
  options.scenario = JobScenario::Exploding;
  options.steps = 20;
  options.fault_step = 10;
  options.tensor_size = 16;
  JobSimulator(options).run();
  return options.output;
}

// The global steps of the condition_met events among JSON lines.
std::vector<std::int64_t> fired_steps(const std::string& json_lines) {
  std::vector<std::int64_t> steps;
  std::istringstream in(json_lines);
  for (std::string line; std::getline(in, line);) {
    const boost::json::object event = boost::json::parse(line).as_object();
    if (event.at("kind").as_string() == "condition_met") {
      EXPECT_EQ(event.at("rule").as_string(), "CustomGradientRule") << line;
      steps.push_back(event.at("global_step").as_int64());
    }
  }
  return steps;
}

TEST(PluginCli, ReplayRunsAPluginsRuleWhereItsConditionHolds) {
  TempDir dir;
  const auto job = exploding_job(dir);
  const auto result =
      run_rulestream("replay " + quoted(job) + " --plugin " + quoted(kExamplePlugin) +
                     " --rule CustomGradientRule --format json");
  EXPECT_EQ(result.exit_code, 1) << result.err;  // a rule fired
  EXPECT_EQ(fired_steps(result.out), (std::vector<std::int64_t>{10, 11})) << result.out;
  EXPECT_NE(result.err.find("CustomGradientRule (CustomGradientRule): IssuesFound, fired 2 times "
                            "in 20 steps evaluated"),
            std::string::npos)
      << result.err;
}

TEST(PluginCli, WatchRunsAPluginsRuleWithItsParameters) {
  TempDir dir;
  const auto job = exploding_job(dir);
  // threshold 1e9: the x1e4 step (abs mean ~100) no longer fires; the infinite one does.
  const auto result =
      run_rulestream("watch " + quoted(job) + " --plugin " + quoted(kExamplePlugin) +
                     " --rule CustomGradientRule:threshold=1e9 --format json");
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(fired_steps(result.out), (std::vector<std::int64_t>{11})) << result.out;
}

TEST(PluginCli, ARulesFileLoadsPluginsFromItsOwnFolder) {
  TempDir dir;
  const auto job = exploding_job(dir);
  std::filesystem::create_directories(dir.path() / "config");
  std::filesystem::copy_file(kExamplePlugin, dir.path() / "config" / "gradients.so");
  testing::write_text_file(dir.path() / "config" / "rules.json", R"({
    "plugins": ["gradients.so"],
    "rules": [{"RuleConfigurationName": "BigGradients",
               "RuleParameters": {"rule_to_invoke": "CustomGradientRule", "threshold": "20"}}]})");
  // Run from elsewhere: "gradients.so" is found beside rules.json, not in the working folder.
  const auto result =
      run_rulestream("replay " + quoted(job) + " --rules " +
                     quoted(dir.path() / "config" / "rules.json") + " --format json");
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(fired_steps(result.out), (std::vector<std::int64_t>{10, 11})) << result.out;
}

// The example plugin's "step_list" sink writes "CONFIGURATION STEP" per condition met.
TEST(PluginCli, ReplayWritesThroughAPluginsSink) {
  TempDir dir;
  const auto job = exploding_job(dir);
  const auto list = dir.path() / "fired.txt";
  const auto result =
      run_rulestream("replay " + quoted(job) + " --plugin " + quoted(kExamplePlugin) +
                     " --rule CustomGradientRule --sink step_list:" + quoted(list));
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(result.out, "");  // the only sink is the plugin's
  EXPECT_EQ(testing::read_text_file(list), "CustomGradientRule 10\nCustomGradientRule 11\n");
}

TEST(PluginCli, ARulesFileConfiguresAPluginsSinkByItsKeys) {
  TempDir dir;
  const auto job = exploding_job(dir);
  const auto list = dir.path() / "fired.txt";
  testing::write_text_file(dir.path() / "rules.json", R"({
    "plugins": [")" + kExamplePlugin.string() + R"("],
    "rules": [{"RuleConfigurationName": "BigGradients",
               "RuleParameters": {"rule_to_invoke": "CustomGradientRule"}}],
    "sinks": [{"type": "step_list", "path": ")" + list.string() +
                                                          R"("}]})");
  const auto result =
      run_rulestream("replay " + quoted(job) + " --rules " + quoted(dir.path() / "rules.json"));
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_EQ(testing::read_text_file(list), "BigGradients 10\nBigGradients 11\n");
}

TEST(PluginCli, APluginsSinkRejectsABadParameterInOneLine) {
  TempDir dir;
  const auto job = exploding_job(dir);
  const auto result =
      run_rulestream("replay " + quoted(job) + " --plugin " + quoted(kExamplePlugin) +
                     " --rule CustomGradientRule --sink step_list");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "rulestream replay: sink step_list: needs a path (step_list:PATH)\n");
}

TEST(PluginCli, RulesListsAndDescribesAPluginsRules) {
  const auto listed = run_rulestream("rules --plugin " + quoted(kExamplePlugin));
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("\nCustomGradientRule\n  threshold "), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("VanishingGradient"), std::string::npos);  // beside the built-ins
  const auto described =
      run_rulestream("rules CustomGradientRule --plugin=" + kExamplePlugin.string());
  EXPECT_EQ(described.exit_code, 0) << described.err;
  EXPECT_TRUE(described.out.starts_with(
      "CustomGradientRule\n  gradients whose mean absolute value exceeds a threshold\n"))
      << described.out;
}

TEST(PluginCli, TheSamePluginTwiceIsLoadedOnce) {
  TempDir dir;
  const auto job = exploding_job(dir);
  const auto result =
      run_rulestream("replay " + quoted(job) + " --plugin " + quoted(kExamplePlugin) +
                     " --plugin " + quoted(kExamplePlugin) + " --rule CustomGradientRule");
  EXPECT_EQ(result.exit_code, 1) << result.err;
}

TEST(PluginCli, WithoutThePluginItsRuleIsUnknown) {
  TempDir dir;
  const auto job = exploding_job(dir);
  const auto result = run_rulestream("replay " + quoted(job) + " --rule CustomGradientRule");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("CustomGradientRule"), std::string::npos) << result.err;
}

// --- loads that fail, in-process --------------------------------------------------------------

void expect_load_error(const std::string& command, const std::filesystem::path& plugin,
                       const std::vector<std::string>& fragments) {
  TempDir dir;
  std::vector<std::string> args;
  if (command == "rules") {
    args = {"--plugin", plugin.string()};
  } else {
    args = {exploding_job(dir).string(), "--plugin", plugin.string(), "--rule",
            "VanishingGradient"};
  }
  std::vector<std::string> expected{"plugin " + plugin.string() + ": "};
  expected.insert(expected.end(), fragments.begin(), fragments.end());
  testing::expect_one_line_error(testing::run_cli(command, args), command, expected);
}

TEST(PluginCli, AMissingFileIsAnError) {
  for (const char* command : {"replay", "watch", "rules"}) {
    expect_load_error(command, kBrokenPlugins / "no_such_plugin.so",
                      {"cannot load it: No such file or directory"});
  }
}

TEST(PluginCli, ALibraryWithoutTheEntryPointIsNotAPlugin) {
  expect_load_error("replay", kBrokenPlugins / "no_entry_plugin.so",
                    {"not a rulestream plugin: it has no rulestream_plugin_register"});
}

TEST(PluginCli, AnotherAbiVersionIsRefusedNamingBoth) {
  expect_load_error("replay", kBrokenPlugins / "abi_mismatch_plugin.so",
                    {"built for plugin ABI version 999, but this rulestream has ABI version " +
                     std::to_string(kPluginAbiVersion) + ": rebuild it against this rulestream"});
}

TEST(PluginCli, ASymbolTheProgramLacksFailsTheLoadNamingIt) {
  expect_load_error("rules", kBrokenPlugins / "unresolved_symbol_plugin.so",
                    {"cannot load it: ", "undefined symbol: rulestream_function_no_host_has"});
}

TEST(PluginCli, ARuleNameAlreadyTakenFailsTheLoadAndAddsNothing) {
  expect_load_error("rules", kBrokenPlugins / "clashing_plugin.so",
                    {"rule name \"vanishing_gradient\" is already taken by rule "
                     "VanishingGradient"});
  // All or nothing: the plugin's first rule, which clashed with nothing, was not added either.
  EXPECT_EQ(RuleRegistry::builtin().find("FirstPluginRule"), nullptr);
}

TEST(PluginCli, ABuiltInSinkTypeFailsTheLoadAndAddsNothing) {
  expect_load_error("replay", kBrokenPlugins / "clashing_sink_plugin.so",
                    {"sink type \"file\" is a built-in sink's"});
  EXPECT_EQ(RuleRegistry::builtin().find("FirstPluginRule"), nullptr);
}

TEST(PluginCli, WhatRegistrationThrowsIsReported) {
  expect_load_error("replay", kBrokenPlugins / "throwing_plugin.so",
                    {"registration failed: the plugin's configuration is missing"});
}

}  // namespace
}  // namespace rulestream
