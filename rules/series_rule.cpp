#include "rules/series_rule.hpp"

#include "rules/rule_registry.hpp"

namespace rulestream {

SeriesSelection SeriesSelection::read(ParameterReader& reader, std::optional<SeriesRole> role) {
  SeriesSelection selection(role);
  selection.regexes_ = compile_name_regexes(reader.regex_list("tag_regex", {}));
  return selection;
}

SeriesSelection SeriesSelection::either(std::optional<SeriesRole> role,
                                        std::vector<NameRegex> regexes) {
  SeriesSelection selection(role);
  selection.regexes_ = std::move(regexes);
  selection.role_too_ = role.has_value();
  selection.nothing_ = !role && selection.regexes_.empty();
  return selection;
}

ParameterSpec SeriesSelection::parameter(std::optional<SeriesRole> role) {
  return {"tag_regex", "regex list", "",
          role ? "regexes of tags (tensor names) to watch instead of the " +
                     std::string(series_role_name(*role)) + " series"
               : std::string("regexes of tags (tensor names) to watch instead of every series")};
}

bool SeriesSelection::watches(const SeriesInfo& series) const {
  // A selection is of scalar tags; a histogram's figures are for the rules made for them.
  if (nothing_ || !series.figure.empty()) return false;
  const bool by_role = !role_ || series.role == *role_;
  if (regexes_.empty()) return by_role;
  return (role_too_ && by_role) || any_found_in(regexes_, series.tag);
}

std::vector<std::string> SeriesSelection::patterns() const {
  std::vector<std::string> patterns;
  for (const auto& regex : regexes_) patterns.push_back(regex.pattern());
  return patterns;
}

std::string SeriesSelection::describe() const {
  if (nothing_) return "series at all (no role and no tag_regex to watch)";
  const std::string by_role =
      role_ ? std::string(series_role_name(*role_)) + " series (docs/tensorboard.md: which tags)"
            : std::string("series of scalars");
  if (regexes_.empty()) return by_role;
  std::string patterns;
  for (const auto& regex : regexes_) {
    patterns += (patterns.empty() ? "" : ", ") + ("'" + regex.pattern() + "'");
  }
  return (role_too_ ? by_role + " and no " : std::string()) + "series whose tag matches " +
         patterns;
}

}  // namespace rulestream
