#include "rules/default_rules.hpp"

namespace rulestream {

const std::vector<std::string>& default_rule_names() {
  static const std::vector<std::string> names{"NonFinite",         "Divergence",
                                              "GradientExplosion", "GradientVanishing",
                                              "OverfittingTrend",  "Plateau"};
  return names;
}

}  // namespace rulestream
