// Plugins whose load must fail and add nothing, built from this one file:
// - by default, its second rule takes a built-in rule's alias;
// - with RULESTREAM_CLASHING_PLUGIN_SINK, its sink type is the built-in "file";
// - with RULESTREAM_CLASHING_PLUGIN_THROWS, its registration throws.
#include <memory>
#include <stdexcept>

#include "engine/graph/plugin_api.hpp"

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

void register_plugin(rulestream::PluginRegistrar& registrar) {
#ifdef RULESTREAM_CLASHING_PLUGIN_THROWS
  throw std::runtime_error("the plugin's configuration is missing");
#endif
  registrar.add_rule(spec_named("FirstPluginRule"));
#ifdef RULESTREAM_CLASHING_PLUGIN_SINK
  rulestream::SinkSpec sink;
  sink.type = "file";
  sink.create = [](const rulestream::SinkParameters&) {
    return std::unique_ptr<rulestream::Sink>();
  };
  registrar.add_sink(sink);
#else
  registrar.add_rule(spec_named("vanishing_gradient"));
#endif
}

}  // namespace

RULESTREAM_PLUGIN(register_plugin)
