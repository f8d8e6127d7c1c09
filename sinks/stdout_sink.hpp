#pragma once

#include <mutex>
#include <ostream>

#include "sinks/sink.hpp"

namespace rulestream {

// Writes each event as one line: readable text by default, JSON with Format::Json. An output
// that cannot be written is no failure of the job: an event it refuses goes to stderr instead,
// and once its reader is gone (a closed pipe: `| head`) it is said once and written no more,
// while the other sinks get every event.
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
  bool reader_gone_ = false;  // the pipe was closed (EPIPE): nothing more is written
};

}  // namespace rulestream
