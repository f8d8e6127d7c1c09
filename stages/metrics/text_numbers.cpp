#include "stages/metrics/text_numbers.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

namespace rulestream {
namespace {

bool is_python_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

bool equals_lowercase(std::string_view text, std::string_view lowercase) {
  return text.size() == lowercase.size() &&
         std::equal(text.begin(), text.end(), lowercase.begin(), [](char a, char b) {
           return (a >= 'A' && a <= 'Z' ? static_cast<char>(a - 'A' + 'a') : a) == b;
         });
}

// Digits, at most one point, and an exponent with digits: what float() takes besides the
// words. from_chars also takes "nan(...)" and hex in some modes; this keeps to Python's set.
bool is_decimal_notation(std::string_view text) {
  std::size_t i = 0;
  std::size_t digits = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i, ++digits;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    const std::size_t exponent_start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    if (i == exponent_start) return false;
  }
  return i == text.size();
}

}  // namespace

std::string_view strip_spaces(std::string_view text) {
  while (!text.empty() && is_python_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_python_space(text.back())) text.remove_suffix(1);
  return text;
}

std::optional<double> parse_python_float(std::string_view text) {
  text = strip_spaces(text);
  bool negative = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  const double sign = negative ? -1.0 : 1.0;
  if (equals_lowercase(text, "nan")) return std::numeric_limits<double>::quiet_NaN();
  if (equals_lowercase(text, "inf") || equals_lowercase(text, "infinity")) {
    return sign * std::numeric_limits<double>::infinity();
  }
  if (!is_decimal_notation(text)) return std::nullopt;
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error == std::errc::result_out_of_range) {
    // Past double's range: strtod rounds as Python does (to infinity, or to zero).
    const std::string copy(text);
    value = std::strtod(copy.c_str(), nullptr);
  } else if (error != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return sign * value;
}

std::optional<std::int64_t> integral_step(double value) {
  // 2^63 is exactly representable; every double below it in magnitude converts exactly.
  constexpr double kLimit = 9223372036854775808.0;
  if (!std::isfinite(value) || value != std::trunc(value) || value >= kLimit || value < -kLimit) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(value);
}

}  // namespace rulestream
