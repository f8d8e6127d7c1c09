#include "sinks/webhook_sink.hpp"

#include <boost/json.hpp>
#include <map>
#include <mutex>

#include "sinks/delivery_queue.hpp"

namespace rulestream {

std::string rule_event_label(const RuleEvent& event) {
  if (event.kind == RuleEvent::Kind::Status) {
    return "status event for rule " + event.rule_configuration;
  }
  if (event.kind == RuleEvent::Kind::IncidentResolved) {
    return "resolution of incident " + (event.incident ? event.incident->id : std::string("?"));
  }
  return "event for rule " + event.rule_configuration + " at step " +
         std::to_string(event.global_step);
}

class WebhookSink::PendingByTrial {
 public:
  void add(const std::string& trial) {
    const std::lock_guard lock(mutex_);
    ++counts_[trial];
  }
  void settle(const std::string& trial) {
    const std::lock_guard lock(mutex_);
    const auto found = counts_.find(trial);
    if (found != counts_.end() && --found->second <= 0) counts_.erase(found);
  }
  std::int64_t of(std::string_view trial) const {
    const std::lock_guard lock(mutex_);
    const auto found = counts_.find(trial);
    return found == counts_.end() ? 0 : found->second;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::int64_t, std::less<>> counts_;
};

WebhookSink::WebhookSink(Options options)
    : slack_payload_(options.slack_payload),
      pending_(std::make_shared<PendingByTrial>()),
      queue_(std::make_unique<DeliveryQueue>(
          "webhook", options.url,
          DeliveryOptions{.timeout = options.timeout,
                          .max_attempts = options.max_attempts,
                          .initial_backoff = options.initial_backoff,
                          .max_backoff = options.max_backoff,
                          .dead_letter_path = options.dead_letter_path})) {}

WebhookSink::~WebhookSink() = default;

std::string WebhookSink::describe() const {
  return "webhook " + queue_->redacted_url();
}

void WebhookSink::write(const RuleEvent& event) {
  // A webhook (Slack or a JSON receiver) is told of an incident when it opens and when it
  // resolves: a problem is one message and its all-clear, not a message per step.
  if (event.updates_an_incident()) return;
  Delivery delivery;
  std::string event_json = event.to_json();
  delivery.body = slack_payload_
                      ? boost::json::serialize(boost::json::object{{"text", event.to_text()}})
                      : event_json;
  // The dead letter keeps the event itself, not the Slack message made of it.
  delivery.dead_letter_members = "\"event\":" + event_json;
  delivery.label = rule_event_label(event);
  pending_->add(event.trial);
  delivery.on_settled = [pending = pending_, trial = event.trial] { pending->settle(trial); };
  queue_->enqueue(std::move(delivery));
}

std::int64_t WebhookSink::undelivered(std::string_view trial) const {
  return pending_->of(trial);
}

void WebhookSink::flush() {
  queue_->flush();
}

std::optional<SinkDeliveryCounts> WebhookSink::delivery() const {
  return queue_->counts();
}

std::string WebhookSink::redact(const std::string& url) {
  return redact_url(url);
}

}  // namespace rulestream
