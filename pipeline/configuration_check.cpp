#include "pipeline/configuration_check.hpp"

#include <filesystem>

#include "pipeline/exceptions.hpp"
#include "pipeline/storage_factory.hpp"
#include "pipeline/trial_store.hpp"

namespace rulestream {

std::string trial_name_for(const std::string& path) {
  const auto normal = std::filesystem::path(path).lexically_normal();
  std::string name = normal.filename().string();
  return name.empty() ? normal.parent_path().filename().string() : name;
}

std::vector<StopAction> stop_actions_for(const RuleConfig& config, const Rule& rule,
                                         const std::vector<StopAction>& defaults) {
  if (!config.stop_actions.empty()) return config.stop_actions;
  if (!rule.stops_training_on_fire()) return {};
  if (defaults.empty()) {
    throw RuleConfigError(
        "rule configuration " + config.configuration_name + " (" + std::string(rule.name()) +
        "): parameter stop_training_on_fire is True, but no stop action is configured: give the "
        "rule \"Actions\": [{\"type\": \"stop\", \"pid\": PID}] (or \"command\": CMD) in "
        "the rules file, or --stop-pid PID / --stop-command CMD");
  }
  return defaults;
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
  for (RuleConfig rule_config : config.rules) {
    const auto rule = registry.create(rule_config.rule, context, rule_config.parameters);
    if (rule_config.configuration_name.empty()) {
      rule_config.configuration_name = std::string(rule->name());
    }
    stop_actions_for(rule_config, *rule, config.default_stop_actions);
    rules.push_back(std::move(rule_config));
  }
  SinkRouting(rules, sinks);
}

void check_configuration(const PipelineConfig& config, const RuleRegistry& registry) {
  std::vector<SinkLabel> sinks;
  for (const auto& sink : config.sinks) sinks.push_back(label_of(sink));
  check_configuration(config, sinks, registry);
}

}  // namespace rulestream
