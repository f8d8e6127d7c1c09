#pragma once

#include <string>
#include <vector>

namespace rulestream::testing {

// What `rulestream <command> <args...>` did, run in-process through cli::run.
struct CliOutcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};
CliOutcome run_cli(const std::string& command, std::vector<std::string> args);

// Errors are one line on stderr, prefixed "rulestream <command>: ", exit status 2, nothing on
// stdout, and the line contains every fragment.
void expect_one_line_error(const CliOutcome& outcome, const std::string& command,
                           const std::vector<std::string>& fragments);

}  // namespace rulestream::testing
