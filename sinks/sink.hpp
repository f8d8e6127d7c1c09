#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/model/rule_event.hpp"
#include "sinks/sink_delivery.hpp"

namespace rulestream {

// Where rule events go. write() is called from the pipeline's threads and must return quickly:
// a sink that talks to a slow peer queues and delivers on its own thread. Delivery problems
// after construction never throw out of write(); they are retried, logged and, for sinks that
// can lose events, kept in a dead-letter file. Construction throws a clear error (naming the
// path or the redacted URL) when the sink cannot work at all.
class Sink {
 public:
  virtual ~Sink() = default;
  // For logs: "stdout", "file /var/log/events.jsonl", "webhook https://hooks.example/…".
  virtual std::string describe() const = 0;
  // Thread-safe.
  virtual void write(const RuleEvent& event) = 0;
  // Blocks until every event written so far is delivered or dead-lettered.
  virtual void flush() = 0;
  // What became of the events written so far, for metrics. Thread-safe, and cheap enough to
  // call on every scrape. A sink that delivers within write() (a write that returns has
  // delivered) keeps no counts of its own: nullopt, the default, says so, and whoever calls
  // write() counts for it.
  virtual std::optional<SinkDeliveryCounts> delivery() const { return std::nullopt; }
  // Whether write() only queues and delivery goes on on a thread of the sink's own (a webhook,
  // Alertmanager): flush() then waits for a peer, which may be down.
  virtual bool delivers_later() const { return false; }
  // Events of `trial` (RuleEvent::trial) written and not yet delivered nor given up on: what a
  // sink that queues (a webhook) still holds of one job. 0 for a sink that delivers within
  // write(). Thread-safe.
  virtual std::int64_t undelivered(std::string_view trial) const {
    static_cast<void>(trial);
    return 0;
  }
};

}  // namespace rulestream
