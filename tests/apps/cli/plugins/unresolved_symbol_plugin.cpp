// A plugin that needs a function the host does not have (as one built against a newer
// rulestream would): loading it must fail at once, naming the symbol.
#include "engine/graph/plugin_api.hpp"

extern "C" void rulestream_function_no_host_has();

namespace {
void register_rules(rulestream::PluginRegistrar& /*registrar*/) {
  rulestream_function_no_host_has();
}
}  // namespace

RULESTREAM_PLUGIN(register_rules)
