#include "engine/graph/configuration_check.hpp"

#include <filesystem>

#include "core/model/exceptions.hpp"
#include "sources/open/storage_factory.hpp"
#include "trial/store/trial_store.hpp"

namespace rulestream {

std::string trial_name_for(const std::string& path) {
  const auto normal = std::filesystem::path(path).lexically_normal();
  std::string name = normal.filename().string();
  return name.empty() ? normal.parent_path().filename().string() : name;
}

ConfiguredRule configure_rule(const RuleConfig& config, const RuleContext& context,
                              const std::vector<StopAction>& default_stops,
                              const RuleRegistry& registry) {
  ConfiguredRule configured{config, registry.create(config.rule, context, config.parameters), {}};
  const Rule& rule = *configured.rule;
  if (configured.config.configuration_name.empty()) {
    configured.config.configuration_name = std::string(rule.name());
  }
  configured.stop_actions = stop_actions_for(configured.config, rule.name(),
                                             rule.stops_training_on_fire(), default_stops);
  return configured;
}

std::vector<StopAction> stop_actions_for(const RuleConfig& config, std::string_view rule_name,
                                         bool stops_training_on_fire,
                                         const std::vector<StopAction>& default_stops) {
  if (!config.stop_actions.empty()) return config.stop_actions;
  if (!stops_training_on_fire) return {};
  if (default_stops.empty()) {
    throw RuleConfigError(
        "rule configuration " +
        (config.configuration_name.empty() ? std::string(rule_name) : config.configuration_name) +
        " (" + std::string(rule_name) +
        "): parameter stop_training_on_fire is True, but no stop action is configured: give "
        "the rule \"Actions\": [{\"type\": \"stop\", \"pid\": PID}] (or \"command\": CMD) in "
        "the rules file, or --stop-pid PID / --stop-command CMD");
  }
  return default_stops;
}

void check_configuration(const PipelineConfig& config, const std::vector<SinkLabel>& sinks,
                         const RuleRegistry& registry) {
  if (config.paths.empty()) throw StorageError("no trial path given");
  // Trials that are never fed read nothing: rules are built against their names and paths
  // only (a rule's factory looks at no data).
  std::vector<Trial> trials;
  for (const auto& path : config.paths) {
    TrialOptions options;
    options.name = trial_name_for(path);
    options.auto_refresh = false;
    auto store = std::make_shared<TrialStore>(open_storage(path, config.storage), options);
    store->set_externally_fed();
    trials.push_back(Trial::from_store(std::move(store)));
  }
  const RuleContext context{trials.front(), {trials.begin() + 1, trials.end()}};
  std::vector<RuleConfig> rules;
  for (const RuleConfig& rule_config : config.rules) {
    rules.push_back(
        configure_rule(rule_config, context, config.default_stop_actions, registry).config);
  }
  SinkRouting(rules, sinks);
}

void check_configuration(const PipelineConfig& config, const RuleRegistry& registry) {
  std::vector<SinkLabel> sinks;
  for (const auto& sink : config.sinks) sinks.push_back(label_of(sink));
  check_configuration(config, sinks, registry);
}

}  // namespace rulestream
