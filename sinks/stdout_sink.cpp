#include "sinks/stdout_sink.hpp"

#include <iostream>

namespace rulestream {

StdoutSink::StdoutSink(std::ostream& out, Format format) : out_(out), format_(format) {}

void StdoutSink::write(const RuleEvent& event) {
  // Text is for people: an incident's opening and resolution, not every firing between.
  if (format_ == Format::Text && event.updates_an_incident()) return;
  // Rendered outside the lock: only the output itself needs to be serialised.
  std::string line = format_ == Format::Json ? event.to_json() : event.to_text();
  line += '\n';
  const std::lock_guard lock(mutex_);
  // Flushed per line so a person (or a pipe to jq) sees each event as it happens.
  out_.write(line.data(), static_cast<std::streamsize>(line.size()));
  out_.flush();
  if (!out_) {
    // A closed or full output must not take the pipeline down: the event goes to stderr and
    // the next one tries again.
    out_.clear();
    std::cerr << "rulestream: stdout: cannot write a rule event: " + line;
  }
}

void StdoutSink::flush() {
  const std::lock_guard lock(mutex_);
  out_.flush();
  out_.clear();
}

}  // namespace rulestream
