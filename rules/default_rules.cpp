#include "rules/default_rules.hpp"

namespace rulestream {

const std::vector<std::string>& default_rule_names() {
  static const std::vector<std::string> names{"NonFinite",         "Divergence",
                                              "GradientExplosion", "GradientVanishing",
                                              "OverfittingTrend",  "Plateau"};
  return names;
}

bool judges_by_incident(std::string_view rule) {
  for (const std::string& name : default_rule_names()) {
    if (name == rule) return true;
  }
  return false;
}

}  // namespace rulestream
