#pragma once

#include <boost/program_options.hpp>

#include "engine/graph/pipeline_config.hpp"

namespace rulestream::cli {

// --rules FILE, --rule NAME[:key=value,...] and --plugin FILE.so, which watch, replay and
// report share.
void add_rule_options(boost::program_options::options_description& options);

// Loads the plugins (each --plugin, then the rules file's "plugins"), then adds to `config` the
// rules file's rules, sinks and TensorBoard tag names, then each --rule. Plugins come first so
// that their rules and sink types are known wherever a rule or a sink is named. Throws
// PluginError for a plugin that cannot be loaded, StorageError for a rules file that cannot be
// read, RuleConfigError (or std::invalid_argument) for one that does not parse, naming the file.
void read_rule_options(const boost::program_options::variables_map& options,
                       PipelineConfig& config);

}  // namespace rulestream::cli
