// The CustomGradientRule of custom_gradient_rule.hpp as a plugin, so that the rulestream
// command runs it like a built-in rule:
//
//   rulestream replay JOB --rule CustomGradientRule:threshold=20
//       --plugin build-examples/example_custom_gradient_rule_plugin.so
//
// A plugin links no rulestream library: Rule, Trial and the registry are the command's own
// (rules/plugin_api.hpp states the contract). Build it with examples/CMakeLists.txt against
// the installed package; more rules go in the same registration function.

#include <rulestream/rulestream.hpp>  // the umbrella header: RULESTREAM_PLUGIN among the rest

#include "examples/custom_gradient_rule.hpp"

namespace {

void register_rules(rulestream::PluginRegistrar& registrar) {
  registrar.add_rule(example::CustomGradientRule::spec());
}

}  // namespace

RULESTREAM_PLUGIN(register_rules)
