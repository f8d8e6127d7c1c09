// `rulestream rules [NAME]`: the built-in rules, their parameters and defaults.
#include <iomanip>
#include <ostream>

#include "pipeline/cli/cli.hpp"
#include "pipeline/cli/commands.hpp"
#include "rules/rule_registry.hpp"

namespace rulestream::cli {

int run_rules(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const RuleRegistry& registry = RuleRegistry::builtin();
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    out << "rulestream rules [NAME]\n\nLists the built-in rules with their parameters and "
           "defaults, or describes one.\n";
    return kExitOk;
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
