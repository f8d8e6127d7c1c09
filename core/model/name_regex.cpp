#include "core/model/name_regex.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace rulestream {

struct NameRegex::Compiled {
  explicit Compiled(pcre2_code* compiled) : code(compiled) {}
  ~Compiled() { pcre2_code_free(code); }
  Compiled(const Compiled&) = delete;
  Compiled& operator=(const Compiled&) = delete;

  pcre2_code* code;
};

namespace {

// Match data for one match at a time on this thread: a search only asks whether there is a match,
// so one pair of offsets serves every pattern (a pattern with groups then matches with rc 0).
pcre2_match_data* thread_match_data() {
  struct Owned {
    pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
    ~Owned() { pcre2_match_data_free(data); }
  };
  thread_local Owned owned;
  return owned.data;
}

std::string error_text(int code) {
  std::array<PCRE2_UCHAR, 256> buffer{};
  if (pcre2_get_error_message(code, buffer.data(), buffer.size()) < 0) {
    return "error " + std::to_string(code);
  }
  return std::string(reinterpret_cast<const char*>(buffer.data()));
}

}  // namespace

std::string pcre2_pattern_for_python(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size());
  bool in_class = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    out += c;
    if (c == '\\' && i + 1 < pattern.size()) {
      out += pattern[++i];  // an escaped character is never syntax
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      continue;
    }
    if (c == '[') {
      in_class = true;
      // A ']' right after '[' or '[^' is a member, not the end of the class.
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];
      continue;
    }
    if (c != '{' || i + 1 >= pattern.size() || pattern[i + 1] != ',') continue;
    // "{,n}": Python's 0 to n times. Anything else after "{," stays as written.
    std::size_t end = i + 2;
    while (end < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[end]))) ++end;
    if (end > i + 2 && end < pattern.size() && pattern[end] == '}') out += '0';
  }
  return out;
}

NameRegex::NameRegex(const std::string& pattern) : pattern_(pattern) {
  const std::string translated = pcre2_pattern_for_python(pattern);
  int code = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* compiled =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                    PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &code, &offset, nullptr);
  if (compiled == nullptr) {
    throw RegexError("invalid tensor regex '" + pattern + "': " + error_text(code) + " at offset " +
                     std::to_string(offset));
  }
  // Where the CPU has no JIT, matching interprets the pattern: slower, the same verdicts.
  pcre2_jit_compile(compiled, PCRE2_JIT_COMPLETE);
  compiled_ = std::make_shared<const Compiled>(compiled);
}

bool NameRegex::found_in(std::string_view name) const {
  const int result = pcre2_match(compiled_->code, reinterpret_cast<PCRE2_SPTR>(name.data()),
                                 name.size(), 0, 0, thread_match_data(), nullptr);
  // 0: a match with more groups than the match data holds. Below PCRE2_ERROR_NOMATCH: a limit
  // reached (a pathological pattern), taken as no match rather than as an error per name.
  return result >= 0;
}

std::optional<std::pair<std::size_t, std::size_t>> NameRegex::find_in(std::string_view name) const {
  pcre2_match_data* data = thread_match_data();
  const int result = pcre2_match(compiled_->code, reinterpret_cast<PCRE2_SPTR>(name.data()),
                                 name.size(), 0, 0, data, nullptr);
  if (result < 0) return std::nullopt;
  const PCRE2_SIZE* offsets = pcre2_get_ovector_pointer(data);  // the whole match: pair 0
  return std::pair<std::size_t, std::size_t>{offsets[0], offsets[1] - offsets[0]};
}

std::vector<NameRegex> compile_name_regexes(const std::vector<std::string>& patterns) {
  std::vector<NameRegex> compiled;
  compiled.reserve(patterns.size());
  for (const auto& pattern : patterns) compiled.emplace_back(pattern);
  return compiled;
}

bool any_found_in(const std::vector<NameRegex>& regexes, std::string_view name) {
  return std::any_of(regexes.begin(), regexes.end(),
                     [&](const NameRegex& regex) { return regex.found_in(name); });
}

}  // namespace rulestream
