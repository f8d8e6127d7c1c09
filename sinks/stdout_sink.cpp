#include "sinks/stdout_sink.hpp"

#include <cerrno>
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
  if (reader_gone_) return;
  // Flushed per line so a person (or a pipe to jq) sees each event as it happens.
  errno = 0;
  out_.write(line.data(), static_cast<std::streamsize>(line.size()));
  out_.flush();
  if (!out_) {
    // A closed or full output must not take the pipeline down (SIGPIPE is ignored: main.cpp).
    out_.clear();
    if (errno == EPIPE) {
      reader_gone_ = true;
      std::cerr << "rulestream: stdout was closed by its reader; rule events go to the other "
                   "sinks only\n";
      return;
    }
    // Full, or failing for a while: the event goes to stderr and the next one tries again.
    std::cerr << "rulestream: stdout: cannot write a rule event: " + line;
  }
}

void StdoutSink::flush() {
  const std::lock_guard lock(mutex_);
  out_.flush();
  out_.clear();
}

}  // namespace rulestream
