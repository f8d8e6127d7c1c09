// Rule configurations from a rules file (SageMaker's shape) and from --rule / --sink arguments.
#include "engine/graph/rules_file.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <memory>
#include <stdexcept>

#include "core/model/exceptions.hpp"
#include "rules/default_rules.hpp"

namespace rulestream {
namespace {

using Parameters = std::map<std::string, std::string>;

// The message of the FormatError that parsing `json` raises ("" when it parses).
std::string format_error(std::string_view json, const std::string& path = "rules.json") {
  try {
    parse_rules_file(json, path);
  } catch (const FormatError& error) {
    return error.what();
  }
  return {};
}

void expect_mentions(const std::string& message, std::initializer_list<const char*> fragments) {
  EXPECT_FALSE(message.empty()) << "no error";
  for (const char* fragment : fragments) {
    EXPECT_NE(message.find(fragment), std::string::npos) << fragment << " in: " << message;
  }
}

TEST(RulesFile, ReadsSageMakersShapeWithSinks) {
  const RulesFile file = parse_rules_file(R"({
    "rules": [
      {"RuleConfigurationName": "VG", "InstanceType": "ml.t3.medium",
       "RuleEvaluatorImage": "503895931360.dkr.ecr.us-east-1.amazonaws.com/sagemaker-debugger-rules:latest",
       "VolumeSizeInGB": 0,
       "RuleParameters": {"rule_to_invoke": "VanishingGradient", "threshold": "1e-7"}},
      {"RuleParameters": {"rule_to_invoke": "LossNotDecreasing", "num_steps": "5",
                          "mode": "TRAIN"}}],
    "sinks": [{"type": "file", "path": "events.jsonl"},
              {"type": "webhook", "url": "https://hooks.example/x", "slack": true,
               "dead_letter_path": "undelivered.jsonl"},
              {"type": "webhook", "url": "https://hooks.example/y"},
              {"type": "stdout", "format": "json"},
              {"type": "stdout"}]})",
                                          "rules.json");
  ASSERT_EQ(file.rules.size(), 2u);
  EXPECT_EQ(file.rules[0].configuration_name, "VG");
  EXPECT_EQ(file.rules[0].rule, "VanishingGradient");
  // rule_to_invoke chose the rule; it is not a parameter of it.
  EXPECT_EQ(file.rules[0].parameters, (Parameters{{"threshold", "1e-7"}}));
  EXPECT_EQ(file.rules[1].configuration_name, "");
  EXPECT_EQ(file.rules[1].rule, "LossNotDecreasing");
  EXPECT_EQ(file.rules[1].parameters, (Parameters{{"mode", "TRAIN"}, {"num_steps", "5"}}));

  ASSERT_EQ(file.sinks.size(), 5u);
  EXPECT_EQ(file.sinks[0].type, "file");
  EXPECT_EQ(file.sinks[0].target, "events.jsonl");
  EXPECT_EQ(file.sinks[1].type, "webhook");
  EXPECT_EQ(file.sinks[1].target, "https://hooks.example/x");
  EXPECT_TRUE(file.sinks[1].slack);
  EXPECT_EQ(file.sinks[1].dead_letter_path, "undelivered.jsonl");
  EXPECT_FALSE(file.sinks[2].slack);
  EXPECT_EQ(file.sinks[2].dead_letter_path, "");
  EXPECT_EQ(file.sinks[3].type, "stdout");
  EXPECT_TRUE(file.sinks[3].json);
  EXPECT_FALSE(file.sinks[4].json);
}

TEST(RulesFile, ReadsCreateTrainingJobsDebugRuleConfigurations) {
  const RulesFile file = parse_rules_file(R"({"DebugRuleConfigurations": [
      {"RuleConfigurationName": "Explode",
       "RuleParameters": {"rule_to_invoke": "ExplodingTensor", "only_nan": "True"}}],
      "DebugHookConfig": {"S3OutputPath": "s3://bucket/job"}})",
                                          "job.json");
  ASSERT_EQ(file.rules.size(), 1u);
  EXPECT_EQ(file.rules[0].configuration_name, "Explode");
  EXPECT_EQ(file.rules[0].rule, "ExplodingTensor");
  EXPECT_EQ(file.rules[0].parameters, (Parameters{{"only_nan", "True"}}));
  EXPECT_TRUE(file.sinks.empty());
}

TEST(RulesFile, ReadsABareArray) {
  const RulesFile file = parse_rules_file(
      R"([{"RuleParameters": {"rule_to_invoke": "AllZero", "tensor_regex": "relu.*"}},
          {"RuleParameters": {"rule_to_invoke": "ExplodingTensor"}}])",
      "rules.json");
  ASSERT_EQ(file.rules.size(), 2u);
  EXPECT_EQ(file.rules[0].rule, "AllZero");
  EXPECT_EQ(file.rules[0].parameters, (Parameters{{"tensor_regex", "relu.*"}}));
  EXPECT_EQ(file.rules[1].rule, "ExplodingTensor");
  EXPECT_TRUE(file.rules[1].parameters.empty());
}

TEST(RulesFile, DefaultsNamesTheDefaultSetBesideOtherRules) {
  const RulesFile file = parse_rules_file(
      R"({"rules": ["defaults", {"RuleParameters": {"rule_to_invoke": "LossSpike"}}]})",
      "rules.json");
  ASSERT_EQ(file.rules.size(), default_rule_names().size() + 1);
  for (std::size_t i = 0; i < default_rule_names().size(); ++i) {
    EXPECT_EQ(file.rules[i].rule, default_rule_names()[i]);
    EXPECT_TRUE(file.rules[i].only_where_applicable);
  }
  EXPECT_EQ(file.rules.back().rule, "LossSpike");
  EXPECT_FALSE(file.rules.back().only_where_applicable);
  EXPECT_THROW(parse_rules_file(R"({"rules": ["everything"]})", "rules.json"), FormatError);
}

TEST(RulesFile, IncidentsSetARulesGroupingAndItsBadSettingsAreNamed) {
  const RulesFile file = parse_rules_file(
      R"({"rules": [{"RuleParameters": {"rule_to_invoke": "LossNotDecreasing"},
                     "Incidents": {"Grouping": "series", "QuietSteps": 50}},
                    {"RuleParameters": {"rule_to_invoke": "Divergence"},
                     "Incidents": {"Grouping": "none"}},
                    {"RuleParameters": {"rule_to_invoke": "Plateau"}}]})",
      "rules.json");
  ASSERT_EQ(file.rules.size(), 3U);
  EXPECT_EQ(file.rules[0].incidents.grouped, true);
  EXPECT_EQ(file.rules[0].incidents.quiet_steps, 50);
  EXPECT_EQ(file.rules[1].incidents.grouped, false);
  EXPECT_FALSE(file.rules[2].incidents.grouped);  // unset: the rule's own default
  for (const std::string bad : {R"({"Grouping": "tensor"})", R"({"QuietSteps": -1})",
                                R"({"QuietSteps": "10"})", R"({"Group": "none"})", "[]"}) {
    const std::string text =
        R"({"rules": [{"RuleParameters": {"rule_to_invoke": "Plateau"}, "Incidents": )" + bad +
        "}]}";
    try {
      parse_rules_file(text, "rules.json");
      ADD_FAILURE() << bad;
    } catch (const FormatError& error) {
      EXPECT_NE(std::string(error.what()).find("Incidents"), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find("rules.json: rule 0"), std::string::npos)
          << error.what();
    }
  }
}

TEST(RulesFile, ConvertsNumbersAndBooleansToTheStringsSageMakerWouldHold) {
  const RulesFile file = parse_rules_file(R"([{"RuleParameters": {
      "rule_to_invoke": "LossNotDecreasing", "num_steps": 10, "diff_percent": 0.5,
      "threshold": 1e-7, "big": 18446744073709551615, "negative": -3,
      "use_losses_collection": false, "only_nan": true}}])",
                                          "rules.json");
  ASSERT_EQ(file.rules.size(), 1u);
  EXPECT_EQ(file.rules[0].parameters, (Parameters{{"big", "18446744073709551615"},
                                                  {"diff_percent", "0.5"},
                                                  {"negative", "-3"},
                                                  {"num_steps", "10"},
                                                  {"only_nan", "True"},
                                                  {"threshold", "1e-07"},
                                                  {"use_losses_collection", "False"}}));
}

TEST(RulesFile, MalformedJsonNamesTheFileAndThePosition) {
  const std::string message =
      format_error("{\"rules\": [\n  {\"RuleParameters\": {\"rule_to_invoke\" \"X\"}}]}", "r.json");
  expect_mentions(message, {"r.json", "malformed JSON", "line 2", "column 40"});
  expect_mentions(format_error("", "empty.json"), {"empty.json", "malformed JSON"});
}

TEST(RulesFile, WrongShapesAreNamed) {
  expect_mentions(format_error(R"("VanishingGradient")"),
                  {"rules.json", "\"rules\" or \"DebugRuleConfigurations\""});
  expect_mentions(format_error(R"({"sinks": []})"), {"rules.json", "DebugRuleConfigurations"});
  expect_mentions(format_error(R"({"rules": {"RuleParameters": {}}})"),
                  {"rules.json", "rules must be an array"});
  expect_mentions(format_error(R"({"DebugRuleConfigurations": "VG"})"),
                  {"DebugRuleConfigurations must be an array"});
  expect_mentions(format_error(R"([{"RuleParameters": {"rule_to_invoke": "AllZero"}}, 3])"),
                  {"rules.json: rule 1", "expected an object"});
  expect_mentions(format_error(R"([{"RuleConfigurationName": 7,
                                   "RuleParameters": {"rule_to_invoke": "AllZero"}}])"),
                  {"rule 0", "RuleConfigurationName must be a string"});
}

TEST(RulesFile, ARuleWithoutRuleToInvokeIsAnError) {
  expect_mentions(format_error(R"([{"RuleConfigurationName": "VG"}])"),
                  {"rules.json: rule 0", "RuleParameters", "rule_to_invoke"});
  expect_mentions(format_error(R"([{"RuleConfigurationName": "VG", "RuleParameters": []}])"),
                  {"rule 0", "RuleParameters"});
  expect_mentions(format_error(R"([{"RuleParameters": {"rule_to_invoke": "AllZero"}},
                      {"RuleConfigurationName": "VG", "RuleParameters": {"threshold": "1"}}])"),
                  {"rules.json: rule 1", "rule_to_invoke is missing"});
}

TEST(RulesFile, AParameterMustBeAScalar) {
  expect_mentions(
      format_error(R"([{"RuleParameters": {"rule_to_invoke": "AllZero", "threshold": null}}])"),
      {"rule 0 parameter threshold", "string, number or boolean"});
  expect_mentions(format_error(R"([{"RuleParameters": {"rule_to_invoke": "AllZero",
                                                        "collection_names": ["a", "b"]}}])"),
                  {"rule 0 parameter collection_names"});
}

TEST(RulesFile, BadSinksAreNamed) {
  const auto with_sinks = [](const std::string& sinks) {
    return format_error(R"({"rules": [{"RuleParameters": {"rule_to_invoke": "AllZero"}}],
                             "sinks": )" +
                        sinks + "}");
  };
  expect_mentions(
      with_sinks(R"([{"type": "stdout"}, {"type": "carrier-pigeon"}])"),
      {"rules.json: sink 1", "unknown sink type 'carrier-pigeon'", "stdout", "file", "webhook"});
  expect_mentions(with_sinks(R"([{"path": "events.jsonl"}])"), {"sink 0", "unknown sink type"});
  expect_mentions(with_sinks(R"([{"type": "file"}])"), {"sink 0", "a file sink needs a path"});
  expect_mentions(with_sinks(R"([{"type": "webhook", "slack": true}])"),
                  {"sink 0", "a webhook sink needs a url"});
  expect_mentions(with_sinks(R"([{"type": "file", "path": 3}])"),
                  {"sink 0", "path must be a string"});
  expect_mentions(with_sinks(R"([7])"), {"sink 0", "expected an object"});
  expect_mentions(with_sinks(R"({"type": "stdout"})"), {"sinks must be an array"});
}

// --- Actions ---------------------------------------------------------------------------------

TEST(RulesFile, ReadsActionsBesideRuleParametersAndSinkNames) {
  const RulesFile file = parse_rules_file(R"({
    "rules": [{"RuleConfigurationName": "Stalled",
               "RuleParameters": {"rule_to_invoke": "StalledTrainingRule",
                                  "stop_training_on_fire": "True"},
               "Actions": [{"type": "stop", "pid": 1234},
                           {"type": "stop", "pid": "77", "signal": "SIGINT"},
                           {"type": "stop", "pid": 5, "signal": 9},
                           {"type": "stop", "command": "touch /tmp/stop"},
                           {"type": "notify", "sinks": ["oncall", "events.jsonl"]},
                           {"type": "notify", "sinks": ["audit"]}]},
              {"RuleParameters": {"rule_to_invoke": "AllZero"}}],
    "sinks": [{"type": "webhook", "url": "https://hooks.example/x", "name": "oncall"},
              {"type": "file", "path": "events.jsonl"}]})",
                                          "rules.json");
  ASSERT_EQ(file.rules.size(), 2u);
  const auto& stops = file.rules[0].stop_actions;
  ASSERT_EQ(stops.size(), 4u);
  EXPECT_EQ(stops[0], (StopAction{.pid = 1234, .signal = SIGTERM, .command = ""}));
  EXPECT_EQ(stops[1], (StopAction{.pid = 77, .signal = SIGINT, .command = ""}));
  EXPECT_EQ(stops[2], (StopAction{.pid = 5, .signal = SIGKILL, .command = ""}));
  EXPECT_EQ(stops[3],
            (StopAction{.pid = std::nullopt, .signal = SIGTERM, .command = "touch /tmp/stop"}));
  EXPECT_EQ(file.rules[0].notify_sinks,
            (std::vector<std::string>{"oncall", "events.jsonl", "audit"}));
  EXPECT_TRUE(file.rules[1].stop_actions.empty());
  EXPECT_TRUE(file.rules[1].notify_sinks.empty());
  EXPECT_EQ(file.sinks[0].name, "oncall");
  EXPECT_EQ(file.sinks[1].name, "");
}

TEST(RulesFile, BadActionsAreNamedWithTheirRule) {
  const auto with_actions = [](const std::string& actions) {
    return format_error(R"({"rules": [{"RuleConfigurationName": "Stalled",
                                       "RuleParameters": {"rule_to_invoke": "AllZero"},
                                       "Actions": )" +
                        actions + "}]}");
  };
  expect_mentions(with_actions(R"([{"type": "stop", "pid": 1}, {"type": "halt"}])"),
                  {"rules.json: rule 0 (Stalled) action 1", "unknown action type \"halt\"",
                   "known: stop, notify"});
  expect_mentions(with_actions(R"([{"pid": 1}])"), {"rule 0 (Stalled) action 0", "no type"});
  expect_mentions(with_actions(R"([{"type": "stop"}])"),
                  {"rule 0 (Stalled) action 0", "either \"pid\"", "or \"command\""});
  expect_mentions(with_actions(R"([{"type": "stop", "signal": "SIGINT"}])"),
                  {"rule 0 (Stalled) action 0", "either \"pid\""});
  expect_mentions(with_actions(R"([{"type": "stop", "pid": 1, "command": "x"}])"),
                  {"action 0", "not both"});
  for (const char* pid : {"0", "-1", "\"abc\"", "1.5", "true", "99999999999"}) {
    expect_mentions(with_actions(std::string(R"([{"type": "stop", "pid": )") + pid + "}]"),
                    {"rule 0 (Stalled) action 0", "pid must be a process id"});
  }
  expect_mentions(with_actions(R"([{"type": "stop", "pid": 1, "signal": "SIGNOPE"}])"),
                  {"action 0", "unknown signal 'SIGNOPE'"});
  expect_mentions(with_actions(R"([{"type": "stop", "command": "x", "signal": "SIGINT"}])"),
                  {"action 0", "signal goes with pid"});
  expect_mentions(with_actions(R"([{"type": "stop", "command": ""}])"),
                  {"action 0", "command must be a non-empty string"});
  expect_mentions(with_actions(R"([{"type": "stop", "pdi": 1}])"),
                  {"action 0", "unknown key 'pdi' in a stop action"});
  expect_mentions(with_actions(R"([{"type": "notify"}])"), {"action 0", "needs \"sinks\""});
  expect_mentions(with_actions(R"([{"type": "notify", "sinks": "oncall"}])"),
                  {"action 0", "sinks must be an array"});
  expect_mentions(with_actions(R"([{"type": "notify", "sinks": [""]}])"),
                  {"action 0", "sink names"});
  expect_mentions(with_actions(R"({"type": "stop"})"),
                  {"rule 0 (Stalled)", "Actions must be an array"});
  expect_mentions(with_actions(R"([3])"), {"action 0", "expected an object"});
  // Without a configuration name, the rule is named by rule_to_invoke.
  expect_mentions(format_error(R"([{"RuleParameters": {"rule_to_invoke": "AllZero"},
                                    "Actions": [{"type": "nap"}]}])"),
                  {"rule 0 (AllZero) action 0"});
}

// --- --rule ----------------------------------------------------------------------------------

TEST(RuleArgument, NameAlone) {
  const RuleConfig config = parse_rule_argument("VanishingGradient");
  EXPECT_EQ(config.rule, "VanishingGradient");
  EXPECT_EQ(config.configuration_name, "");
  EXPECT_TRUE(config.parameters.empty());
}

TEST(RuleArgument, ParametersAndTheConfigurationName) {
  const RuleConfig config =
      parse_rule_argument("loss_not_decreasing:num_steps=5,name=Loss,mode=TRAIN,diff_percent=");
  EXPECT_EQ(config.rule, "loss_not_decreasing");
  EXPECT_EQ(config.configuration_name, "Loss");
  // An empty value is a value: the rule decides whether it accepts it.
  EXPECT_EQ(config.parameters,
            (Parameters{{"diff_percent", ""}, {"mode", "TRAIN"}, {"num_steps", "5"}}));
  EXPECT_TRUE(parse_rule_argument("AllZero:").parameters.empty());
  EXPECT_EQ(parse_rule_argument("AllZero:threshold=5,").parameters,
            (Parameters{{"threshold", "5"}}));
  // Everything after the first '=' is the value.
  EXPECT_EQ(parse_rule_argument("AllZero:tensor_regex=a=b").parameters,
            (Parameters{{"tensor_regex", "a=b"}}));
}

TEST(RuleArgument, ListValuesKeepTheirCommas) {
  const RuleConfig config = parse_rule_argument(
      "ExplodingTensor:collection_names=weights,gradients,only_nan=True,tensor_regex=relu.*,fc1");
  EXPECT_EQ(config.parameters, (Parameters{{"collection_names", "weights,gradients"},
                                           {"only_nan", "True"},
                                           {"tensor_regex", "relu.*,fc1"}}));
}

TEST(RuleArgument, MalformedArgumentsAreNamed) {
  const auto message = [](const std::string& argument) {
    try {
      parse_rule_argument(argument);
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  expect_mentions(message(":threshold=1"), {"--rule ':threshold=1'", "no rule name"});
  expect_mentions(message(""), {"no rule name"});
  expect_mentions(
      message("VanishingGradient:threshold"),
      {"--rule 'VanishingGradient:threshold'", "expected key=value", "got 'threshold'"});
  expect_mentions(message("VanishingGradient:=1e-7"), {"expected key=value", "got '=1e-7'"});
  expect_mentions(message("AllZero:,threshold=5"), {"expected key=value", "got ''"});
}

// --- --sink ----------------------------------------------------------------------------------

TEST(SinkArgument, EveryKind) {
  const SinkConfig text = parse_sink_argument("stdout");
  EXPECT_EQ(text.type, "stdout");
  EXPECT_FALSE(text.json);
  EXPECT_TRUE(parse_sink_argument("stdout:json").json);
  EXPECT_FALSE(parse_sink_argument("stdout:text").json);

  const SinkConfig file = parse_sink_argument("file:/var/log/events:2024.jsonl");
  EXPECT_EQ(file.type, "file");
  EXPECT_EQ(file.target, "/var/log/events:2024.jsonl");

  const SinkConfig webhook = parse_sink_argument("webhook:https://hooks.example/a?b=c");
  EXPECT_EQ(webhook.type, "webhook");
  EXPECT_EQ(webhook.target, "https://hooks.example/a?b=c");
  EXPECT_FALSE(webhook.slack);

  const SinkConfig slack = parse_sink_argument("slack:https://hooks.slack.com/services/T/B/X");
  EXPECT_EQ(slack.type, "webhook");
  EXPECT_TRUE(slack.slack);
  EXPECT_EQ(slack.target, "https://hooks.slack.com/services/T/B/X");
}

TEST(SinkArgument, Alertmanager) {
  const SinkConfig sink = parse_sink_argument("alertmanager:http://am.example:9093");
  EXPECT_EQ(sink.type, "alertmanager");
  EXPECT_EQ(sink.target, "http://am.example:9093");
  EXPECT_TRUE(sink.parameters.empty());
  EXPECT_THROW(parse_sink_argument("alertmanager"), std::invalid_argument);
}

TEST(RulesFile, ReadsAnAlertmanagerSink) {
  const RulesFile file = parse_rules_file(R"({"rules": [], "sinks": [
      {"type": "alertmanager", "name": "oncall", "url": "http://am.example:9093",
       "resend_interval": 30, "severity": "critical", "generator_url": "http://rs.example/",
       "bearer_token_file": "/run/secrets/am", "dead_letter_path": "am-dead.jsonl"},
      {"type": "alertmanager", "url": "http://am.example:9093", "resend_interval": "2.5"}]})",
                                          "rules.json");
  ASSERT_EQ(file.sinks.size(), 2u);
  EXPECT_EQ(file.sinks[0].type, "alertmanager");
  EXPECT_EQ(file.sinks[0].name, "oncall");
  EXPECT_EQ(file.sinks[0].target, "http://am.example:9093");
  EXPECT_EQ(file.sinks[0].dead_letter_path, "am-dead.jsonl");
  EXPECT_EQ(file.sinks[0].parameters, (Parameters{{"resend_interval", "30"},
                                                  {"severity", "critical"},
                                                  {"generator_url", "http://rs.example/"},
                                                  {"bearer_token_file", "/run/secrets/am"}}));
  EXPECT_EQ(file.sinks[1].parameters, (Parameters{{"resend_interval", "2.5"}}));

  const auto with_sink = [](const std::string& sink) {
    return format_error(R"({"rules": [], "sinks": [)" + sink + "]}");
  };
  expect_mentions(with_sink(R"({"type": "alertmanager"})"),
                  {"sink 0", "an alertmanager sink needs a url"});
  expect_mentions(with_sink(R"({"type": "alertmanager", "url": "http://a", "severty": "x"})"),
                  {"sink 0", "unknown key 'severty'", "severity"});
  expect_mentions(
      with_sink(R"({"type": "alertmanager", "url": "http://a", "resend_interval": [1]})"),
      {"sink 0", "resend_interval must be a number of seconds"});
  expect_mentions(with_sink(R"({"type": "alertmanager", "url": 9093})"),
                  {"sink 0", "url must be a string"});
}

TEST(SinkArgument, MalformedArgumentsAreNamed) {
  const auto message = [](const std::string& argument) {
    try {
      parse_sink_argument(argument);
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  expect_mentions(message("stdout:xml"), {"stdout", "'xml'"});
  expect_mentions(message("file:"), {"--sink file", "needs a target"});
  expect_mentions(message("file"), {"--sink file", "needs a target"});
  expect_mentions(message("slack"), {"--sink slack", "needs a target"});
  expect_mentions(message("carrier:pigeon"), {"--sink 'carrier'", "unknown sink"});
}

TEST(RulesFile, ReadsTensorBoardTagPatterns) {
  const RulesFile file = parse_rules_file(R"({"rules": [],
    "tensorboard": {"loss": ["^objective$", "nll"], "eval": ["holdout"]}})",
                                          "rules.json");
  EXPECT_EQ(file.tensorboard_names, (std::map<std::string, std::vector<std::string>>{
                                        {"loss", {"^objective$", "nll"}}, {"eval", {"holdout"}}}));
  expect_mentions(format_error(R"({"rules": [], "tensorboard": {"losses": ["x"]}})"),
                  {"rules.json: tensorboard", "unknown TensorBoard name 'losses'", "loss"});
  expect_mentions(format_error(R"({"rules": [], "tensorboard": {"loss": ["(unclosed"]}})"),
                  {"rules.json: tensorboard", "(unclosed"});
  expect_mentions(format_error(R"({"rules": [], "tensorboard": {"loss": "loss"}})"),
                  {"loss must be an array of regexes"});
}

// --- plugins, and the sink types they add ------------------------------------------------------

// A sink type as a plugin adds one; never built here.
SinkRegistry registry_with_csv() {
  SinkRegistry types;
  types.add({.type = "csv", .description = "", .create = [](const SinkParameters&) {
               return std::unique_ptr<Sink>();
             }});
  return types;
}

TEST(RulesFile, PluginsAreTakenFromTheRulesFilesFolder) {
  const std::string json = R"({"plugins": ["mine.so", "/opt/theirs.so", "sub/more.so"],
                              "rules": []})";
  const std::vector<std::string> expected{"/etc/rulestream/mine.so", "/opt/theirs.so",
                                          "/etc/rulestream/sub/more.so"};
  EXPECT_EQ(parse_rules_file(json, "/etc/rulestream/rules.json").plugins, expected);
  EXPECT_EQ(rules_file_plugins(json, "/etc/rulestream/rules.json"), expected);
  // A rules file in the working folder: the paths are as written.
  EXPECT_EQ(rules_file_plugins(json, "rules.json")[0], "mine.so");
  EXPECT_TRUE(rules_file_plugins(R"([{"RuleParameters": {}}])", "rules.json").empty());
}

TEST(RulesFile, PluginsMustBeAnArrayOfPaths) {
  for (const char* plugins : {R"("mine.so")", R"([""])", R"([3])"}) {
    const std::string json = std::string(R"({"rules": [], "plugins": )") + plugins + "}";
    expect_mentions(format_error(json), {"rules.json", "plugins must be an array of plugin file"});
  }
}

TEST(RulesFile, APluginsSinkTypeTakesItsKeysAsParameters) {
  const SinkRegistry types = registry_with_csv();
  const RulesFile file = parse_rules_file(R"({"rules": [],
    "sinks": [{"type": "csv", "name": "sheet", "path": "events.csv", "separator": ";"}]})",
                                          "rules.json", types);
  ASSERT_EQ(file.sinks.size(), 1u);
  EXPECT_EQ(file.sinks[0].type, "csv");
  EXPECT_EQ(file.sinks[0].name, "sheet");
  EXPECT_EQ(file.sinks[0].parameters, (Parameters{{"path", "events.csv"}, {"separator", ";"}}));
  // Without the plugin, the type is unknown; with it, it is listed among the known ones.
  expect_mentions(
      format_error(R"({"rules": [], "sinks": [{"type": "csv"}]})"),
      {"sink 0", "unknown sink type 'csv'", "(known: stdout, file, webhook, alertmanager)"});
  try {
    parse_rules_file(R"({"rules": [], "sinks": [{"type": "tsv"}]})", "rules.json", types);
    ADD_FAILURE() << "no error";
  } catch (const FormatError& error) {
    expect_mentions(error.what(),
                    {"unknown sink type 'tsv'", "stdout, file, webhook, alertmanager, csv"});
  }
  try {
    parse_rules_file(R"({"rules": [], "sinks": [{"type": "csv", "path": 3}]})", "rules.json",
                     types);
    ADD_FAILURE() << "no error";
  } catch (const FormatError& error) {
    expect_mentions(error.what(), {"sink 0", "path must be a string"});
  }
}

TEST(SinkArgument, APluginsSinkType) {
  const SinkRegistry types = registry_with_csv();
  const SinkConfig with_target = parse_sink_argument("csv:out/events.csv", types);
  EXPECT_EQ(with_target.type, "csv");
  EXPECT_EQ(with_target.target, "out/events.csv");
  EXPECT_EQ(with_target.parameters, (Parameters{{"target", "out/events.csv"}}));
  const SinkConfig bare = parse_sink_argument("csv", types);
  EXPECT_EQ(bare.type, "csv");
  EXPECT_TRUE(bare.parameters.empty());
  try {
    parse_sink_argument("tsv:x", types);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& error) {
    expect_mentions(error.what(),
                    {"--sink 'tsv'", "unknown sink", "slack:URL, alertmanager:URL, csv"});
  }
}

}  // namespace
}  // namespace rulestream
