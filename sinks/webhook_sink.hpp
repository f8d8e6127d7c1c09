#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "sinks/sink.hpp"

namespace rulestream {

class DeliveryQueue;

// POSTs each event's JSON to an HTTP(S) URL with libcurl, from its own thread (a
// DeliveryQueue): write() only queues. Failed deliveries (connection errors, timeouts, 5xx,
// 429) are retried with exponential backoff; after the last retry the event is appended to the
// dead-letter file, so no event is ever lost. Delivery is at-least-once.
//
// A webhook URL is a secret (Slack's carry a token): describe(), logs and errors show only the
// scheme, host and a redacted path.
class WebhookSink final : public Sink {
 public:
  struct Options {
    std::string url;
    std::chrono::milliseconds timeout{5000};
    int max_attempts = 5;
    std::chrono::milliseconds initial_backoff{200};
    std::chrono::milliseconds max_backoff{10000};
    // Created at the first dead letter, not before.
    std::filesystem::path dead_letter_path = "rulestream-dead-letters.jsonl";
    bool slack_payload = false;  // {"text": "<the event's text line>"} instead of the event
  };

  explicit WebhookSink(Options options);
  ~WebhookSink() override;  // delivers or dead-letters what is queued, then stops
  std::string describe() const override;
  void write(const RuleEvent& event) override;
  void flush() override;
  std::optional<SinkDeliveryCounts> delivery() const override;
  bool delivers_later() const override { return true; }
  std::int64_t undelivered(std::string_view trial) const override;

  // "https://hooks.slack.com/services/T0…/…" style redaction: scheme://host[:port]/<redacted>.
  static std::string redact(const std::string& url);

  // Events queued and not yet settled, by trial; shared with the queue's callbacks.
  class PendingByTrial;

 private:
  const bool slack_payload_;
  std::shared_ptr<PendingByTrial> pending_;
  std::unique_ptr<DeliveryQueue> queue_;  // last: its thread stops before the rest goes
};

// "event for rule VG at step 40", "status event for rule VG": how log lines name an event
// without its whole JSON.
std::string rule_event_label(const RuleEvent& event);

}  // namespace rulestream
