#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/graph/pipeline_config.hpp"
#include "engine/graph/sink_routing.hpp"
#include "rules/rule_registry.hpp"

namespace rulestream {

// The name a trial given by path goes by: in events, and in the parameters of rules that name
// another trial (SimilarAcrossRuns' other_trial). "/jobs/run-2/" and "s3://b/jobs/run-2" are
// both "run-2".
std::string trial_name_for(const std::string& path);

// A configured rule, built: its configuration (the configuration name defaulted to the rule's
// name), the rule, and what it runs the first time it fires (its own stop actions, or
// `default_stops` when it asks to stop training and configures none).
struct ConfiguredRule {
  RuleConfig config;
  std::unique_ptr<Rule> rule;
  std::vector<StopAction> stop_actions;
};
// Throws RuleConfigError for an unknown rule, a bad parameter, or a rule asking to stop
// training (stop_training_on_fire) with no stop action to run.
ConfiguredRule configure_rule(const RuleConfig& config, const RuleContext& context,
                              const std::vector<StopAction>& default_stops,
                              const RuleRegistry& registry);

// What a rule runs the first time it fires: `config`'s own stop actions; else, when the rule
// asks to stop training, `default_stops` (RuleConfigError when there are none); else none.
// `rule_name` names the rule in that error.
std::vector<StopAction> stop_actions_for(const RuleConfig& config, std::string_view rule_name,
                                         bool stops_training_on_fire,
                                         const std::vector<StopAction>& default_stops);

// Checks a configuration without reading anything: every rule is built (unknown rules, unknown
// parameters and bad values fail here, naming the rule, the parameter and the value), stop
// actions are worked out and notify actions must name one of `sinks`. Throws RuleConfigError.
// Run before any sink is opened or any trial read, so a typo in a rules file creates no event
// file and downloads nothing.
void check_configuration(const PipelineConfig& config, const std::vector<SinkLabel>& sinks,
                         const RuleRegistry& registry = RuleRegistry::builtin());
// The same, with the sinks the configuration lists (as the CLI builds them).
void check_configuration(const PipelineConfig& config,
                         const RuleRegistry& registry = RuleRegistry::builtin());

}  // namespace rulestream
