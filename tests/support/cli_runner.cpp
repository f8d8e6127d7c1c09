#include "tests/support/cli_runner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "apps/cli/cli.hpp"

namespace rulestream::testing {

CliOutcome run_cli(const std::string& command, std::vector<std::string> args) {
  args.insert(args.begin(), command);
  std::ostringstream out;
  std::ostringstream err;
  const int code = cli::run(args, out, err);
  return {code, out.str(), err.str()};
}

void expect_one_line_error(const CliOutcome& outcome, const std::string& command,
                           const std::vector<std::string>& fragments) {
  EXPECT_EQ(outcome.exit_code, cli::kExitError) << outcome.err;
  EXPECT_TRUE(outcome.out.empty()) << outcome.out;
  EXPECT_TRUE(outcome.err.starts_with("rulestream " + command + ": ")) << outcome.err;
  EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1) << outcome.err;
  for (const auto& fragment : fragments) {
    EXPECT_NE(outcome.err.find(fragment), std::string::npos) << fragment << " in " << outcome.err;
  }
}

}  // namespace rulestream::testing
