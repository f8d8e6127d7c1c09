#include "rules/support/rule_text.hpp"

#include <charconv>
#include <cmath>

namespace rulestream {

std::string format_figure(double value) {
  return figure_text(value);
}

std::string format_rounded(double value) {
  if (!std::isfinite(value)) return format_figure(value);
  char buffer[32];
  const auto result =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general, 3);
  return std::string(buffer, result.ptr);
}

std::string more_tensors_suffix(const Finding& finding) {
  const std::size_t count = finding.tensors.size();
  if (count <= 1) return {};
  return std::string(" (and ") + (count >= kMaxReportedTensors ? "at least " : "") +
         std::to_string(count - 1) + " more " + (count == 2 ? "tensor" : "tensors") + ")";
}

}  // namespace rulestream
