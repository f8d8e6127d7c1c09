#include "pipeline/cli/rule_cli_options.hpp"

#include "pipeline/graph/rules_file.hpp"

namespace rulestream::cli {

namespace po = boost::program_options;

void add_rule_options(po::options_description& options) {
  options.add_options()("rules", po::value<std::string>()->value_name("FILE"),
                        "rule configurations in SageMaker's shape (and sinks)")(
      "rule", po::value<std::vector<std::string>>()->value_name("NAME[:key=value,...]"),
      "a rule to run (repeatable); see 'rulestream rules'");
}

void read_rule_options(const po::variables_map& options, PipelineConfig& config) {
  if (options.count("rules")) {
    RulesFile file = read_rules_file(options["rules"].as<std::string>());
    config.rules = std::move(file.rules);
    config.sinks = std::move(file.sinks);
    config.tensorboard_names = std::move(file.tensorboard_names);
  }
  if (options.count("rule")) {
    for (const auto& argument : options["rule"].as<std::vector<std::string>>()) {
      config.rules.push_back(parse_rule_argument(argument));
    }
  }
}

}  // namespace rulestream::cli
