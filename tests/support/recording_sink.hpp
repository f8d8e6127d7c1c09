#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/model/rule_event.hpp"
#include "sinks/sink.hpp"

namespace rulestream::testing {

// Keeps every event a pipeline sends out, for tests to look at. Thread-safe.
class RecordingSink final : public Sink {
 public:
  // `name` is what describe() says, which is what notify actions call a hand-built sink.
  explicit RecordingSink(std::string name = "recording") : name_(std::move(name)) {}

  std::string describe() const override { return name_; }
  void write(const RuleEvent& event) override;
  void flush() override {}

  std::vector<RuleEvent> events() const;
  // The global steps of a rule configuration's condition-met events, sorted.
  std::vector<std::int64_t> steps_fired(const std::string& configuration) const;
  std::optional<RuleEvent> status_of(const std::string& configuration) const;

 private:
  std::string name_;
  mutable std::mutex mutex_;
  std::vector<RuleEvent> events_;
};

}  // namespace rulestream::testing
