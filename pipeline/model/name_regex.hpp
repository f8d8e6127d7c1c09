#pragma once

#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace rulestream {

// A regex over tensor names, used as smdebug uses them (Python's re.search: a match anywhere in
// the name), ECMAScript syntax, compiled once.
//
// std::regex backtracks: a leading ".*", which a search never needs (a match may start
// anywhere, and ".*" may match nothing), makes it scan the rest of the name from every position.
// On a 28-character name that is 9 us a search against 0.33 us without it, and rules' default
// regexes (".*relu_output", ".*tanh_output", ...) are matched against every tensor name a job
// saves. So the compiled pattern leaves a leading ".*" out: for every name the verdict is the
// same (".*X" is found in a name exactly when "X" is).
class NameRegex {
 public:
  // Throws std::regex_error for a pattern that does not compile.
  explicit NameRegex(const std::string& pattern);

  bool found_in(const std::string& name) const { return std::regex_search(name, compiled_); }
  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  std::regex compiled_;
};

// The pattern a search compiles for `pattern`: without its leading ".*" (one or more, greedy or
// lazy) when one is there, else the pattern itself.
std::string searched_pattern(std::string_view pattern);

// Compiles each pattern; std::invalid_argument naming the pattern for one that does not compile.
std::vector<NameRegex> compile_name_regexes(const std::vector<std::string>& patterns);

bool any_found_in(const std::vector<NameRegex>& regexes, const std::string& name);

}  // namespace rulestream
