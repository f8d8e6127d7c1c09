#include <csignal>
#include <iostream>
#include <string>
#include <vector>

#include "apps/cli/cli.hpp"

int main(int argc, char** argv) {
  // A reader that goes away (`rulestream replay ... | head`) must not kill the process with
  // events still queued for the other sinks: writes to its pipe fail (EPIPE) instead, and the
  // stdout sink stops writing there (sinks/stdout_sink.hpp). Stop commands get it back.
  std::signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> args(argv + 1, argv + argc);
  return rulestream::cli::run(args, std::cout, std::cerr);
}
