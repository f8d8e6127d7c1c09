#include "apps/cli/rule_cli_options.hpp"

#include <fstream>
#include <sstream>

#include "engine/graph/plugin_loader.hpp"
#include "engine/graph/rules_file.hpp"

namespace rulestream::cli {

namespace po = boost::program_options;

void add_rule_options(po::options_description& options) {
  options.add_options()("rules", po::value<std::string>()->value_name("FILE"),
                        "rule configurations in SageMaker's shape (and sinks)")(
      "rule", po::value<std::vector<std::string>>()->value_name("NAME[:key=value,...]"),
      "a rule to run (repeatable); see 'rulestream rules'")(
      "plugin", po::value<std::vector<std::string>>()->value_name("FILE.so"),
      "load rules and sinks from a plugin built against rulestream's package (repeatable)");
}

void read_rule_options(const po::variables_map& options, PipelineConfig& config) {
  if (options.count("plugin")) {
    for (const auto& plugin : options["plugin"].as<std::vector<std::string>>()) {
      load_plugin(plugin);
    }
  }
  if (options.count("rules")) {
    const std::string path = options["rules"].as<std::string>();
    std::ifstream in(path, std::ios::binary);
    if (!in) throw StorageError(path + ": cannot read the rules file");
    std::ostringstream text;
    text << in.rdbuf();
    for (const auto& plugin : rules_file_plugins(text.str(), path)) load_plugin(plugin);
    RulesFile file = parse_rules_file(text.str(), path);
    config.rules = std::move(file.rules);
    config.sinks = std::move(file.sinks);
    config.tensorboard_names = std::move(file.tensorboard_names);
  }
  if (options.count("rule")) {
    for (const auto& argument : options["rule"].as<std::vector<std::string>>()) {
      if (argument == kDefaultRulesName) {
        for (RuleConfig& rule : default_rule_configs()) config.rules.push_back(std::move(rule));
      } else {
        config.rules.push_back(parse_rule_argument(argument));
      }
    }
  }
}

}  // namespace rulestream::cli
