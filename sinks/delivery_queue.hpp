#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "sinks/sink_delivery.hpp"

namespace rulestream {

// How a sink that POSTs over HTTP delivers: the timeout of one attempt, how many attempts an
// item gets, the backoff between them, and where what cannot be delivered is kept.
struct DeliveryOptions {
  std::chrono::milliseconds timeout{5000};
  int max_attempts = 5;
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{10000};
  // Created at the first dead letter, not before; its folder must exist.
  std::filesystem::path dead_letter_path = "rulestream-dead-letters.jsonl";
  // Sent as "Authorization: Bearer TOKEN" when set; never shown.
  std::string bearer_token;
};

// One POST to make.
struct Delivery {
  std::string body;  // the JSON posted
  // What the dead-letter record keeps of it: one or more JSON members, without braces
  // ("\"event\":{...}"), so that a person can replay it.
  std::string dead_letter_members;
  // How log lines name it: "event for rule VG at step 40".
  std::string label;
  // Called on the queue's thread once the item is delivered or dead-lettered (or lost): what
  // its sender counts as still undelivered. Must not throw.
  std::function<void()> on_settled;
};

// POSTs JSON bodies to one URL with libcurl, one at a time in the order they were queued, from
// a thread of its own: enqueue() only queues. Failed attempts (connection errors, timeouts,
// 5xx, 429, 408) are retried with exponential backoff (a Retry-After wins); after the last
// attempt, or at once for an error no retry can mend (a 4xx), the item is appended to the
// dead-letter file, so nothing is ever lost. Delivery is at-least-once. An item backing off
// holds the ones behind it until it is delivered or dead-lettered, which bounds how long that
// can be.
//
// The URL is a secret (a token in its path, credentials in its user info): logs, errors and
// dead letters show only redact_url(url).
//
// Thread-safe: enqueue(), flush(), counts() and redacted_url() may be called from any thread.
class DeliveryQueue {
 public:
  // `kind` names the sink in logs and dead letters ("webhook", "alertmanager"). Throws
  // std::invalid_argument for a URL or options it cannot work with, StorageError for a
  // dead-letter file that could not be created.
  DeliveryQueue(std::string kind, const std::string& url, const DeliveryOptions& options);
  // Delivers what is queued, but once closing the peer gets max_attempts failed attempts in
  // all, not per item: a dead endpoint must not hold up the process's exit for (items ×
  // attempts × timeout). What is left then goes straight to the dead letters.
  ~DeliveryQueue();
  DeliveryQueue(const DeliveryQueue&) = delete;
  DeliveryQueue& operator=(const DeliveryQueue&) = delete;

  // For the whole process, from any thread (a second Ctrl-C or SIGTERM): every queue that is
  // closing, or closes later, tries nothing more and dead-letters what it holds at once.
  static void hurry_shutdown();

  void enqueue(Delivery delivery);
  // Blocks until every item queued before the call is delivered or dead-lettered.
  void flush();
  SinkDeliveryCounts counts() const;
  const std::string& redacted_url() const;

 private:
  class Worker;
  std::unique_ptr<Worker> worker_;
};

// "https://hooks.slack.com/services/T0…/…" style redaction: scheme://host[:port]/…, or
// "<unparseable URL>". User info, path, query and fragment are all left out: any of them may
// hold a token.
std::string redact_url(const std::string& url);

}  // namespace rulestream
