#pragma once

#include <mutex>
#include <ostream>

#include "sinks/sink.hpp"

namespace rulestream {

// Writes each event as one line: readable text by default, JSON with Format::Json.
class StdoutSink final : public Sink {
 public:
  enum class Format { Text, Json };
  explicit StdoutSink(std::ostream& out, Format format = Format::Text);
  std::string describe() const override { return "stdout"; }
  void write(const RuleEvent& event) override;
  void flush() override;

 private:
  std::ostream& out_;
  Format format_;
  std::mutex mutex_;
};

}  // namespace rulestream
