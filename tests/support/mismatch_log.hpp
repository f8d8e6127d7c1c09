#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>

#include "core/model/mode.hpp"

namespace rulestream::testing {

// Where a check applies: the trial, and as far as known the tensor, step, mode and worker.
struct Where {
  std::string trial;
  std::string tensor;
  std::optional<std::int64_t> step;
  Mode mode = Mode::Global;
  std::string worker;

  Where with_tensor(std::string name) const;
  Where with_step(std::int64_t at, Mode in = Mode::Global) const;
  Where with_worker(std::string name) const;
  std::string to_string() const;  // "trial pt-dtypes, tensor 'dt_int8', TRAIN step 4, worker_0"
};

// Reports mismatches between rulestream and the expected files as GoogleTest failures that
// name the trial, tensor, step, worker and the expected file's key.
//
// The suite checks tens of thousands of figures, so one reader bug can fail thousands of them
// at once: only the first few failures of each key are printed in full, the rest are counted
// and reported as one summary failure when the log is destroyed. Every mismatch still fails
// the test.
class MismatchLog {
 public:
  explicit MismatchLog(std::size_t shown_per_key = 8) : shown_per_key_(shown_per_key) {}
  ~MismatchLog();
  MismatchLog(const MismatchLog&) = delete;
  MismatchLog& operator=(const MismatchLog&) = delete;

  void fail(const Where& where, std::string_view key, const std::string& message,
            std::source_location location = std::source_location::current());

  // Equality with a uniform message: "<key>: rulestream gives X, smdebug reported Y".
  template <typename T, typename U>
  bool expect_equal(const Where& where, std::string_view key, const T& ours, const U& expected,
                    std::source_location location = std::source_location::current());

  std::size_t failures() const { return failures_; }

 private:
  std::size_t shown_per_key_;
  std::size_t failures_ = 0;
  std::map<std::string, std::size_t, std::less<>> per_key_;
};

// Printing for the values the suite compares (vectors, optionals, strings, numbers).
std::string printed(const std::string& text);
std::string printed(std::string_view text);
std::string printed(const char* text);
std::string printed(bool value);
std::string printed(double value);
std::string printed(std::int64_t value);
std::string printed(std::uint64_t value);
std::string printed(int value);
template <typename T>
std::string printed(const std::optional<T>& value) {
  return value ? printed(*value) : std::string("null");
}
template <typename Container>
requires requires(const Container& c) {
  c.begin();
  c.end();
  c.size();
}
std::string printed(const Container& values) {
  std::string text = "[";
  bool first = true;
  for (const auto& value : values) {
    if (!first) text += ", ";
    first = false;
    text += printed(value);
  }
  return text + "]";
}

template <typename T, typename U>
bool MismatchLog::expect_equal(const Where& where, std::string_view key, const T& ours,
                               const U& expected, std::source_location location) {
  if (ours == expected) return true;
  fail(where, key, "rulestream gives " + printed(ours) + ", smdebug reported " + printed(expected),
       location);
  return false;
}

}  // namespace rulestream::testing
