#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/graph/pipeline_config.hpp"
#include "sinks/sink_registry.hpp"

namespace rulestream {

// What a rules file configures.
struct RulesFile {
  std::vector<RuleConfig> rules;
  std::vector<SinkConfig> sinks;
  std::map<std::string, std::vector<std::string>> tensorboard_names;  // "tensorboard"
  // Plugin files to load before the rules are built ("plugins"), relative paths resolved
  // against the rules file's folder.
  std::vector<std::string> plugins;
};

// Parses rule configurations in SageMaker's shape, so existing configs carry over:
//   {"rules": [{"RuleConfigurationName": "VG",
//               "RuleParameters": {"rule_to_invoke": "VanishingGradient", "threshold": "1e-7"}}],
//    "sinks": [{"type": "file", "path": "events.jsonl"},
//              {"type": "webhook", "url": "https://...", "slack": true},
//              {"type": "stdout", "format": "json"}],
//    "tensorboard": {"loss": ["^objective$"], "eval": ["holdout"]},
//    "plugins": ["my_rules.so"]}
// A rule's firings may group into incidents by series; "Incidents" beside its RuleParameters
// says how: {"Grouping": "series" or "none" (every firing stands alone; unset: series for the
// rules of the default set, none for the others, which keep smdebug's per-step semantics),
// "QuietSteps": N (a series' firing N steps or more after its last starts a new incident; 0:
// never; unset: 100 for a rule that does not say when its condition clears, never for one that
// does)}.
// The string "defaults" in "rules" stands for the default set (default_rule_configs), which
// other entries may join: ["defaults", {"RuleConfigurationName": "LS", ...}].
// "tensorboard" replaces the tag patterns of roles and modes for TensorBoard logdirs
// (docs/tensorboard.md); each key a list of Python regexes. "plugins" names shared libraries
// with more rules (engine/graph/plugin_api.hpp), relative to the rules file's folder.
// A rule may act when it fires, with "Actions" beside its RuleParameters:
//   "Actions": [{"type": "stop", "pid": 1234, "signal": "SIGTERM"},  // signal defaults to SIGTERM
//               {"type": "stop", "command": "kill $(cat /run/train.pid)"},
//               {"type": "notify", "sinks": ["oncall"]}]
// and a sink may be named ("name": "oncall") for notify actions (see SinkRouting for what they
// do). A bad action (unknown type or key, no pid or command, a pid that is not a positive
// integer, an unknown signal) is a FormatError naming the rule and the action.
// Also accepted: a bare array of rule configurations, and {"DebugRuleConfigurations": [...]}
// as CreateTrainingJob takes it. Other SageMaker keys (InstanceType, RuleEvaluatorImage, ...)
// are ignored. Parameter values must be strings, as in SageMaker; numbers and booleans are
// accepted and converted ("True"/"False" for booleans). Throws FormatError naming the file
// and the entry at fault. A sink of a type in `sink_types` (a plugin's) takes every key but
// "type" and "name" as its parameters, each a string; load the file's plugins (rules_file_plugins)
// before parsing it, so that their sink types are known.
RulesFile parse_rules_file(std::string_view json, const std::string& path,
                           const SinkRegistry& sink_types = SinkRegistry::plugins());

// Only the "plugins" of a rules file (resolved as parse_rules_file does), for loading them
// before the file is parsed; FormatError for a "plugins" that is not an array of paths, or a
// file that is not JSON.
std::vector<std::string> rules_file_plugins(std::string_view json, const std::string& path);

// The rules file at `path`, read and parsed: StorageError naming it when it cannot be read,
// FormatError (as parse_rules_file) when it does not parse.
RulesFile read_rules_file(const std::string& path);

// "NAME" or "NAME:key=value,key=value" from the command line (--rule).
RuleConfig parse_rule_argument(const std::string& argument);

// The default set (rules/default_rules.hpp) as configurations with their default parameters,
// each marked only_where_applicable. What a logdir is judged by when no rule is named, and what
// "defaults" names in a rules file's "rules" and in --rule.
std::vector<RuleConfig> default_rule_configs();
// The name that stands for the default set.
inline constexpr std::string_view kDefaultRulesName = "defaults";

// "stdout", "stdout:json", "file:PATH", "webhook:URL", "slack:URL", "alertmanager:URL" from the
// command line, or
// "TYPE[:TARGET]" of a type in `sink_types` (parameters {"target": TARGET} when given).
SinkConfig parse_sink_argument(const std::string& argument,
                               const SinkRegistry& sink_types = SinkRegistry::plugins());

}  // namespace rulestream
