// `rulestream rules [NAME | --defaults] [--plugin FILE]`: the built-in rules (and those of
// plugins), their parameters and defaults; or the default set a logdir is judged by.
#include <iomanip>
#include <ostream>
#include <stdexcept>
#include <string_view>

#include "apps/cli/cli.hpp"
#include "apps/cli/commands.hpp"
#include "engine/graph/plugin_loader.hpp"
#include "rules/default_rules.hpp"
#include "rules/rule_registry.hpp"

namespace rulestream::cli {

int run_rules(const std::vector<std::string>& all_args, std::ostream& out, std::ostream& err) {
  const RuleRegistry& registry = RuleRegistry::builtin();
  if (!all_args.empty() && (all_args[0] == "--help" || all_args[0] == "-h")) {
    out << "rulestream rules [NAME | --defaults] [--plugin FILE.so]...\n\nLists the built-in "
           "rules (and those of the plugins given) with their parameters and defaults, or "
           "describes one.\n--defaults describes the default set: what a TensorBoard logdir is "
           "judged by when no rule is named (a rules file or --rule names it \"defaults\").\n";
    return kExitOk;
  }
  // --plugin FILE (or --plugin=FILE), repeatable, anywhere; the rest is the rule's name.
  std::vector<std::string> args;
  try {
    for (std::size_t i = 0; i < all_args.size(); ++i) {
      if (all_args[i] == "--plugin") {
        if (i + 1 == all_args.size()) throw std::invalid_argument("--plugin needs a file");
        load_plugin(all_args[++i]);
      } else if (all_args[i].starts_with("--plugin=")) {
        load_plugin(all_args[i].substr(std::string_view("--plugin=").size()));
      } else {
        args.push_back(all_args[i]);
      }
    }
  } catch (const std::exception& error) {  // PluginError, or --plugin without its file
    err << "rulestream rules: " << error.what() << "\n";
    return kExitError;
  }
  if (args.size() > 1) {
    err << "rulestream rules: expected at most one rule name\n";
    return kExitError;
  }
  auto describe = [&](const RuleSpec& spec, bool long_form) {
    out << spec.name;
    if (!spec.aliases.empty()) {
      out << " (also";
      for (const auto& alias : spec.aliases) out << " " << alias;
      out << ")";
    }
    out << "\n";
    if (long_form) out << "  " << spec.description << "\n";
    for (const auto& parameter : spec.parameters) {
      out << "  " << std::left << std::setw(28) << parameter.name << std::setw(12) << parameter.type
          << "default " << (parameter.default_value.empty() ? "(none)" : parameter.default_value)
          << "\n";
      if (long_form && !parameter.description.empty()) {
        out << "      " << parameter.description << "\n";
      }
    }
  };
  if (args.size() == 1 && args[0] == "--defaults") {
    out << "The default set: what watch, replay, report and serve judge a TensorBoard logdir by\n"
           "when no rule is named (a rule whose inputs the logdir lacks reports "
           "NotApplicable).\n\n";
    for (const std::string& name : default_rule_names()) {
      if (const RuleSpec* spec = registry.find(name)) describe(*spec, true);
    }
    return kExitOk;
  }
  if (args.size() == 1) {
    const RuleSpec* spec = registry.find(args[0]);
    if (spec == nullptr) {
      err << "rulestream rules: unknown rule '" << args[0] << "'\n";
      return kExitError;
    }
    describe(*spec, true);
    return kExitOk;
  }
  for (const RuleSpec* spec : registry.all()) describe(*spec, false);
  return kExitOk;
}

}  // namespace rulestream::cli
