#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rulestream {

// A pattern that does not compile, with PCRE2's reason and where in the pattern it lies.
class RegexError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A regex over tensor names, used as smdebug uses them: Python's `re.search`, a match anywhere
// in the name, in Python's syntax. smdebug's own collections (its XGBoost hook's
// "^[a-zA-z]+-.+(?<!(auc|map))$") and users' configs use lookbehind and (?P<name>...) groups,
// which std::regex rejects, so names are matched with PCRE2 (Debian's libpcre2-8), whose syntax
// is Python's but for a few corners: `{,n}` (Python: 0 to n times; PCRE2 10.42: literal text) is
// rewritten as `{0,n}`. Patterns are compiled once, JIT-compiled where the CPU allows; PCRE2
// anchors a pattern that starts with ".*" by itself, so such a search does not rescan the name
// from every position (std::regex did: 9 us a name instead of 0.3). Names are UTF-8; invalid
// UTF-8 in a name does not match where it is invalid, and is no error.
//
// Copies share the compiled pattern. Thread-safe: found_in may be called from any number of
// threads at once (each uses match data of its own).
class NameRegex {
 public:
  // Throws RegexError naming the pattern, PCRE2's reason and the offset, for a pattern that
  // does not compile.
  explicit NameRegex(const std::string& pattern);

  bool found_in(std::string_view name) const;
  // Where the first match lies in `name`: its offset and length; nullopt for none.
  std::optional<std::pair<std::size_t, std::size_t>> find_in(std::string_view name) const;
  const std::string& pattern() const { return pattern_; }

 private:
  struct Compiled;
  std::string pattern_;
  std::shared_ptr<const Compiled> compiled_;
};

// Python's `re` syntax written the way PCRE2 reads it (today: `{,n}` as `{0,n}`).
std::string pcre2_pattern_for_python(std::string_view pattern);

// Compiles each pattern; RegexError (a std::invalid_argument) naming the pattern for one that
// does not compile.
std::vector<NameRegex> compile_name_regexes(const std::vector<std::string>& patterns);

bool any_found_in(const std::vector<NameRegex>& regexes, std::string_view name);

}  // namespace rulestream
