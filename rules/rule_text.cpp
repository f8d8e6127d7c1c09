#include "rules/rule_text.hpp"

#include <cmath>
#include <cstdio>

namespace rulestream {

std::string format_figure(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  char buffer[32];
  const int length = std::snprintf(buffer, sizeof buffer, "%g", value);
  return std::string(buffer, static_cast<std::size_t>(length));
}

std::string more_tensors_suffix(const Finding& finding) {
  const std::size_t count = finding.tensors.size();
  if (count <= 1) return {};
  return std::string(" (and ") + (count >= kMaxReportedTensors ? "at least " : "") +
         std::to_string(count - 1) + " more " + (count == 2 ? "tensor" : "tensors") + ")";
}

}  // namespace rulestream
