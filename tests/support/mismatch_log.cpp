#include "tests/support/mismatch_log.hpp"

#include <gtest/gtest.h>

#include <charconv>
#include <cmath>

namespace rulestream::testing {

Where Where::with_tensor(std::string name) const {
  Where copy = *this;
  copy.tensor = std::move(name);
  return copy;
}

Where Where::with_step(std::int64_t at, Mode in) const {
  Where copy = *this;
  copy.step = at;
  copy.mode = in;
  return copy;
}

Where Where::with_worker(std::string name) const {
  Where copy = *this;
  copy.worker = std::move(name);
  return copy;
}

std::string Where::to_string() const {
  std::string text = "trial " + trial;
  if (!tensor.empty()) text += ", tensor '" + tensor + "'";
  if (step) {
    text += mode == Mode::Global ? ", step " : ", " + std::string(mode_name(mode)) + " step ";
    text += std::to_string(*step);
  }
  if (!worker.empty()) text += ", " + worker;
  return text;
}

MismatchLog::~MismatchLog() {
  for (const auto& [key, count] : per_key_) {
    if (count > shown_per_key_) {
      ADD_FAILURE() << (count - shown_per_key_) << " more mismatches of key '" << key
                    << "' not shown (" << count << " in all)";
    }
  }
}

void MismatchLog::fail(const Where& where, std::string_view key, const std::string& message,
                       std::source_location location) {
  ++failures_;
  auto it = per_key_.find(key);
  if (it == per_key_.end()) it = per_key_.emplace(std::string(key), 0).first;
  if (++it->second > shown_per_key_) return;
  ADD_FAILURE_AT(location.file_name(), static_cast<int>(location.line()))
      << where.to_string() << ", key '" << key << "': " << message;
}

std::string printed(const std::string& text) {
  return "\"" + text + "\"";
}
std::string printed(std::string_view text) {
  return printed(std::string(text));
}
std::string printed(const char* text) {
  return printed(std::string(text));
}
std::string printed(bool value) {
  return value ? "true" : "false";
}
std::string printed(std::int64_t value) {
  return std::to_string(value);
}
std::string printed(std::uint64_t value) {
  return std::to_string(value);
}
std::string printed(int value) {
  return std::to_string(value);
}

// Shortest round-trip form, so that two doubles that print alike are equal.
std::string printed(double value) {
  if (std::isnan(value)) return std::signbit(value) ? "-NaN" : "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

}  // namespace rulestream::testing
