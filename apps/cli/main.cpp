#include <iostream>
#include <string>
#include <vector>

#include "apps/cli/cli.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return rulestream::cli::run(args, std::cout, std::cerr);
}
