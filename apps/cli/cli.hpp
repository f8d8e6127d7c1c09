#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace rulestream::cli {

// Exit statuses every command shares (documented in docs/cli.md, "Exit status", and the README).
inline constexpr int kExitOk = 0;
inline constexpr int kExitRuleFired = 1;  // a rule's condition was met (watch/replay)
inline constexpr int kExitError = 2;      // bad arguments, unreadable path, ...

// Runs `rulestream <args...>` (args excludes the program name), writing to out/err.
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace rulestream::cli
