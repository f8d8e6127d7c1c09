#include "engine/graph/sink_routing.hpp"

#include <algorithm>

#include "rules/rule_registry.hpp"

namespace rulestream {

SinkLabel label_of(const SinkConfig& config) {
  SinkLabel label;
  if (!config.name.empty()) label.names.push_back(config.name);
  label.names.push_back(config.type == "stdout" ? std::string("stdout") : config.target);
  // A URL is a secret (a token in its path): an error message names it by its type only.
  const bool url = config.type == "webhook" || config.type == "alertmanager";
  label.shown = !config.name.empty() ? config.name
                : url                ? "an unnamed " + config.type
                                     : label.names.back();
  return label;
}

SinkLabel label_of(const std::string& description) {
  return SinkLabel{{description}, description};
}

SinkRouting::SinkRouting(const std::vector<RuleConfig>& rules,
                         const std::vector<SinkLabel>& sinks) {
  const auto answers_to = [](const SinkLabel& sink, const std::string& name) {
    return std::find(sink.names.begin(), sink.names.end(), name) != sink.names.end();
  };
  std::vector<bool> reserved(sinks.size(), false);
  for (const auto& rule : rules) {
    for (const auto& name : rule.notify_sinks) {
      bool found = false;
      for (std::size_t i = 0; i < sinks.size(); ++i) {
        if (!answers_to(sinks[i], name)) continue;
        reserved[i] = true;
        found = true;
      }
      if (found) continue;
      std::string known;
      for (const auto& sink : sinks) known += (known.empty() ? "" : ", ") + sink.shown;
      throw RuleConfigError("rule configuration " + rule.configuration_name +
                            ": notify action: no sink named '" + name +
                            "' (sinks: " + (known.empty() ? "none" : known) + ")");
    }
  }
  for (const auto& rule : rules) {
    std::vector<std::size_t>& route = routes_.emplace_back();
    for (std::size_t i = 0; i < sinks.size(); ++i) {
      const bool named =
          std::any_of(rule.notify_sinks.begin(), rule.notify_sinks.end(),
                      [&](const std::string& name) { return answers_to(sinks[i], name); });
      if (!reserved[i] || named) route.push_back(i);
    }
  }
}

}  // namespace rulestream
