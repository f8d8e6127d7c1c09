#include "apps/cli/cli.hpp"

#include <functional>
#include <map>
#include <ostream>

#include "apps/cli/commands.hpp"

namespace rulestream::cli {
namespace {

struct Command {
  std::string summary;
  std::function<int(const std::vector<std::string>&, std::ostream&, std::ostream&)> run;
};

const std::map<std::string, Command>& commands() {
  static const std::map<std::string, Command> table{
      {"inspect", {"summarise a trial, or one tensor's steps and reductions", run_inspect}},
      {"simulate", {"write a synthetic training job in smdebug's format", run_simulate}},
      {"watch", {"follow a training job live and run rules on each step as it lands", run_watch}},
      {"replay", {"run rules over an archived training job as fast as possible", run_replay}},
      {"report",
       {"write one self-contained HTML page of a job: curves and rule firings", run_report}},
      {"serve",
       {"follow every job under folders of jobs and answer HTTP: statuses, metrics", run_serve}},
      {"rules", {"list the built-in rules with their parameters and defaults", run_rules}},
  };
  return table;
}

void print_usage(std::ostream& out) {
  out << "usage: rulestream <command> [options]\n\ncommands:\n";
  for (const auto& [name, command] : commands()) {
    out << "  " << name << std::string(10 - std::min<std::size_t>(name.size(), 9), ' ')
        << command.summary << "\n";
  }
  out << "\n'rulestream <command> --help' describes a command.\n";
}

}  // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty()) {
    print_usage(err);
    return kExitError;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_usage(out);
    return kExitOk;
  }
  const auto it = commands().find(args[0]);
  if (it == commands().end()) {
    err << "rulestream: unknown command '" << args[0] << "'\n";
    print_usage(err);
    return kExitError;
  }
  // Commands report what they expect to fail (bad input, storage, rules) themselves; anything
  // else that reaches here (memory exhausted, no thread to start) is still one line and exit
  // status 2, never an abort.
  try {
    return it->second.run(std::vector<std::string>(args.begin() + 1, args.end()), out, err);
  } catch (const std::exception& error) {
    err << "rulestream " << args[0] << ": " << error.what() << "\n";
  } catch (...) {
    err << "rulestream " << args[0] << ": failed with an exception of an unknown type\n";
  }
  return kExitError;
}

}  // namespace rulestream::cli
