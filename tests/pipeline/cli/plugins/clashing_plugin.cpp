// A plugin whose second rule takes a built-in rule's alias, and a plugin whose registration
// throws (RULESTREAM_CLASHING_PLUGIN_THROWS): either load must fail and add nothing.
#include <memory>
#include <stdexcept>

#include "rules/plugin_api.hpp"

namespace {

rulestream::RuleSpec spec_named(const char* name) {
  rulestream::RuleSpec spec;
  spec.name = name;
  spec.description = "never built: the load fails first";
  spec.create = [](const rulestream::RuleContext&, const rulestream::RuleParameters&) {
    return std::unique_ptr<rulestream::Rule>();
  };
  return spec;
}

void register_rules(rulestream::PluginRegistrar& registrar) {
#ifdef RULESTREAM_CLASHING_PLUGIN_THROWS
  throw std::runtime_error("the plugin's configuration is missing");
#endif
  registrar.add_rule(spec_named("FirstPluginRule"));
  registrar.add_rule(spec_named("vanishing_gradient"));
}

}  // namespace

RULESTREAM_PLUGIN(register_rules)
