#include "pipeline/model/name_regex.hpp"

#include <algorithm>
#include <stdexcept>

namespace rulestream {

std::string searched_pattern(std::string_view pattern) {
  std::string_view rest = pattern;
  // ".*" or ".*?", but not ".**", ".*+" or ".*{": those are errors, which the pattern as written
  // must report.
  while (rest.starts_with(".*")) {
    std::string_view after = rest.substr(2);
    if (after.starts_with("?")) after.remove_prefix(1);
    if (after.starts_with("*") || after.starts_with("+") || after.starts_with("{") ||
        after.starts_with("?")) {
      break;
    }
    rest = after;
  }
  return std::string(rest);
}

NameRegex::NameRegex(const std::string& pattern) : pattern_(pattern) {
  // The pattern as written must compile: a search never sees an error the simplification hides.
  const std::regex as_written(pattern, std::regex::ECMAScript);
  const std::string searched = searched_pattern(pattern);
  compiled_ =
      searched.size() == pattern.size() ? as_written : std::regex(searched, std::regex::ECMAScript);
}

std::vector<NameRegex> compile_name_regexes(const std::vector<std::string>& patterns) {
  std::vector<NameRegex> compiled;
  compiled.reserve(patterns.size());
  for (const auto& pattern : patterns) {
    try {
      compiled.emplace_back(pattern);
    } catch (const std::regex_error& error) {
      throw std::invalid_argument("invalid tensor regex '" + pattern + "': " + error.what());
    }
  }
  return compiled;
}

bool any_found_in(const std::vector<NameRegex>& regexes, const std::string& name) {
  return std::any_of(regexes.begin(), regexes.end(),
                     [&](const NameRegex& regex) { return regex.found_in(name); });
}

}  // namespace rulestream
