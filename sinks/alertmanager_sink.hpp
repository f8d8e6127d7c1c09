#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "sinks/delivery_queue.hpp"
#include "sinks/sink.hpp"

namespace rulestream {

// Raises rule findings as alerts in Prometheus' Alertmanager, through its API v2: POST
// URL/api/v2/alerts with a JSON array of alerts. One alert per job and rule configuration,
// labelled
//   alertname = rule_configuration (the RuleConfigurationName), job (the trial's name), rule,
//   rule_configuration, severity (an option: "warning" unless set)
// and annotated with the latest finding (summary, description, step, firings).
//
// Alertmanager's semantics, as Prometheus keeps them:
// - An alert fires from its rule's first condition met (sent at once, startsAt = that event's
//   time) until its rule's status event, which comes when the job ends or the rule stops.
// - While it fires it is sent again every resend_interval, with the latest finding, and with
//   endsAt = now + 4 × resend_interval: should rulestream die, Alertmanager resolves the alert
//   itself after that, and while it lives the alert never times out between sends.
// - The status event resolves it: sent once more with endsAt = the status event's time and the
//   final status in its annotations. A rule that never fired raises no alert.
// Every POST goes through a DeliveryQueue: retried with backoff, dead-lettered ("alerts": the
// array) when it cannot be delivered, so no alert is lost; delivery() counts POSTs.
//
// The URL (credentials in its user info, a token in its path) and the bearer token are
// secrets: describe(), logs and dead letters show only the URL's scheme and host.
//
// Thread-safe: write() and flush() from any thread (the pipeline's rule nodes, several jobs at
// once); the alerts that fire are kept under one mutex, and a resend thread of the sink's own
// sends them on time.
class AlertmanagerSink final : public Sink {
 public:
  struct Options {
    // Alertmanager's address ("http://alertmanager:9093", with a route prefix if it has one);
    // "/api/v2/alerts" is added to its path unless it already ends so.
    std::string url;
    std::chrono::milliseconds resend_interval{std::chrono::seconds(60)};
    std::string severity = "warning";
    // A link sent with every alert (the service's /api/jobs, a dashboard); none when empty.
    std::string generator_url;
    DeliveryOptions delivery;  // timeout, attempts, backoff, dead letters, bearer token
    // Asked before each resend, on the resend thread, outside the sink's lock (it may take a
    // round trip); false skips that resend, and so does an exception. `serve` asks whether the
    // job is still the instance's (its fencing token in Redis): an owner paused past its lease
    // must not resend, when it wakes, an alert the new owner has resolved. None: always resend.
    std::function<bool()> may_resend;
  };

  // Throws std::invalid_argument for a URL or option it cannot work with, StorageError for a
  // dead-letter file that could not be created.
  explicit AlertmanagerSink(Options options);
  // Stops resending, then delivers or dead-letters what is queued (DeliveryQueue's bounds).
  // Alerts still firing are left to their endsAt.
  ~AlertmanagerSink() override;
  std::string describe() const override;
  void write(const RuleEvent& event) override;
  void flush() override;
  std::optional<SinkDeliveryCounts> delivery() const override;
  bool delivers_later() const override { return true; }

  // URL with "/api/v2/alerts" added to its path (unless it ends so already); throws
  // std::invalid_argument, naming only the redacted URL, when it is not an http(s) URL.
  static std::string alerts_url(const std::string& url);

 private:
  // One alert as Alertmanager sees it. Firing while ends_at is unset.
  struct Alert {
    std::map<std::string, std::string> labels;
    std::map<std::string, std::string> annotations;
    std::chrono::system_clock::time_point starts_at;
    std::optional<std::chrono::system_clock::time_point> ends_at;
    std::int64_t firings = 0;
  };
  // trial, rule configuration, incident id ("" for a rule whose firings are not grouped)
  using AlertKey = std::tuple<std::string, std::string, std::string>;

  void resend_while_firing();
  // Under mutex_, so that what is queued follows the order of what happened (a resend never
  // lands after the resolve of an alert it carries). Queues one POST per batch of alerts: a firing
  // one valid until now + 4 × resend_interval, a resolved one ended at its ends_at. `why` names the
  // POST in logs ("resend").
  void send(const std::vector<Alert>& alerts, std::string_view why);

  const Options options_;
  std::unique_ptr<DeliveryQueue> queue_;

  std::mutex mutex_;  // guards what follows
  std::condition_variable wake_;
  std::map<AlertKey, Alert> firing_;
  bool stopping_ = false;

  std::thread resender_;  // last: started once everything above is
};

}  // namespace rulestream
