#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace rulestream::cli {

// Each command takes its arguments (after the command name) and returns an exit status.
int run_inspect(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run_watch(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run_replay(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run_rules(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run_report(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run_serve(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run_simulate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace rulestream::cli
