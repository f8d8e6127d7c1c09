#pragma once

#include <atomic>
#include <cstdint>

namespace rulestream {

// What a sink has done with the events written to it since it was made. One event may cost
// several attempts: each failed attempt is a failure, each attempt after a failed one a retry,
// and an event given up on (kept in a dead-letter file) a dead letter. So an event delivered at
// its third attempt counts 1 delivered, 2 failures and 2 retries.
struct SinkDeliveryCounts {
  std::int64_t delivered = 0;     // events that reached the destination
  std::int64_t retries = 0;       // attempts made after a failed one
  std::int64_t failures = 0;      // attempts that failed
  std::int64_t dead_letters = 0;  // events given up on and kept for a person to replay

  friend bool operator==(const SinkDeliveryCounts&, const SinkDeliveryCounts&) = default;
  SinkDeliveryCounts& operator+=(const SinkDeliveryCounts& other) {
    delivered += other.delivered;
    retries += other.retries;
    failures += other.failures;
    dead_letters += other.dead_letters;
    return *this;
  }
  friend SinkDeliveryCounts operator-(SinkDeliveryCounts a, const SinkDeliveryCounts& b) {
    a.delivered -= b.delivered;
    a.retries -= b.retries;
    a.failures -= b.failures;
    a.dead_letters -= b.dead_letters;
    return a;
  }
};

// The counts as a sink keeps them while it delivers. Thread-safe: each count is an atomic,
// added to by the delivering thread and read by any (a scrape of /metrics). A snapshot is not
// one instant across the four counts, only each count's own; every count only grows.
class SinkDeliveryCounters {
 public:
  void delivered() { delivered_.fetch_add(1, std::memory_order_relaxed); }
  void retried() { retries_.fetch_add(1, std::memory_order_relaxed); }
  void failed() { failures_.fetch_add(1, std::memory_order_relaxed); }
  void dead_lettered() { dead_letters_.fetch_add(1, std::memory_order_relaxed); }

  SinkDeliveryCounts snapshot() const {
    return {delivered_.load(std::memory_order_relaxed), retries_.load(std::memory_order_relaxed),
            failures_.load(std::memory_order_relaxed),
            dead_letters_.load(std::memory_order_relaxed)};
  }

 private:
  std::atomic<std::int64_t> delivered_{0};
  std::atomic<std::int64_t> retries_{0};
  std::atomic<std::int64_t> failures_{0};
  std::atomic<std::int64_t> dead_letters_{0};
};

}  // namespace rulestream
