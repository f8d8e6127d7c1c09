#pragma once

#include <string>

#include "core/model/exceptions.hpp"
#include "rules/rule_registry.hpp"
#include "sinks/sink_registry.hpp"

namespace rulestream {

// A plugin that cannot be loaded; the message names the file and says why in one line.
class PluginError : public RulestreamError {
 public:
  using RulestreamError::RulestreamError;
};

// Loads the plugin at `path` (engine/graph/plugin_api.hpp: the contract) and adds its rules
// to `rules` and its sink types to `sinks`, all of them or, when the load fails, none. A file
// already loaded into this process (the same file by its canonical path, through any link) is not
// loaded again. Throws PluginError naming the file when it cannot be opened or a symbol it needs is
// missing from this program, when it has no entry point, when its ABI version is not this
// program's (both versions named), or when registration fails (a rule name or sink type already
// taken).
//
// Concurrency: loads are serialised among themselves; the registries are not locked, so load
// plugins before anything reads them (before pipelines run), as the CLI does.
void load_plugin(const std::string& path, RuleRegistry& rules = RuleRegistry::builtin(),
                 SinkRegistry& sinks = SinkRegistry::plugins());

}  // namespace rulestream
