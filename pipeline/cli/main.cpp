#include <iostream>

int main() {
  std::cerr << "rulestream: the command line is being assembled\n";
  return 2;
}
