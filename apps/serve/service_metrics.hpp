#pragma once

// The service's counters, and their rendering in Prometheus' text exposition format (version
// 0.0.4): metric names in snake_case under `rulestream_`, counters ending in `_total`, units in
// the name (`_bytes`), label values escaped.

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "apps/serve/job_registry.hpp"
#include "engine/graph/trial_presence.hpp"
#include "sinks/sink.hpp"

namespace rulestream {

// Thread-safe: every member may be called from any thread (one mutex; the counts are added
// at job-poll and rule-event rates, far below what a mutex costs).
class ServiceMetrics {
 public:
  // The histogram's upper bounds, in seconds: a live event is expected well under a second;
  // a job found already written shows its backlog in the upper buckets.
  static constexpr std::array<double, 12> kLatencyBuckets{0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                          0.5,   1,    2.5,   5,    10,  60};

  // What a job read since its last report: smdebug steps and tensors, TensorBoard values
  // (scalars and histograms), bytes of event files.
  void add_read(TrialFormat format, std::int64_t steps, std::int64_t tensors, std::int64_t values,
                std::uint64_t bytes);
  void add_jobs_found(std::int64_t count);
  // Steps (TensorBoard values) a rule evaluated; counted when its job ends.
  void add_evaluations(const std::string& rule_configuration, const std::string& rule,
                       std::int64_t count);
  void add_firing(const std::string& rule_configuration, const std::string& rule);
  // An incident opened (a firing's incident note says Opened), or resolved.
  void add_incident_opened(const std::string& rule_configuration, const std::string& rule);
  void add_incident_resolved(const std::string& rule_configuration, const std::string& rule);
  // An event handed to a sink (`sink` as Sink::describe() says it: no secret), and one whose
  // write threw (a failed delivery, never retried). A sink that keeps no delivery counts of its
  // own (Sink::delivery() is nullopt) delivers within write(): each event it took is counted
  // delivered here too (add_synchronous_delivery).
  void add_sink_event(const std::string& sink);
  void add_sink_failure(const std::string& sink);
  void add_synchronous_delivery(const std::string& sink);
  // From track_sink until the matching untrack_sink, the sink's delivery() is read at every
  // render (what it did while tracked: its counts less those it had when first tracked); after
  // the last untrack_sink those counts stay in its description's totals. A sink tracked by
  // several holders at once (a service sink by every job) counts once. The sink must outlive
  // its tracking. Sinks that describe themselves alike (two jobs' webhooks to one URL) add up.
  void track_sink(const Sink& sink);
  void untrack_sink(const Sink& sink);
  // Seconds from a step's data landing (its index file seen, or written before the service
  // looked) to a rule event about it.
  void observe_event_latency(double seconds);

  // Every metric, with `jobs` (a count by state, as JobRegistry::count_by_state) as the
  // rulestream_jobs gauge and, when instances share a Redis, `leases_held` (this instance's)
  // as rulestream_coordinator_leases_held.
  std::string render(const std::map<JobState, std::size_t>& jobs,
                     std::optional<std::size_t> leases_held = std::nullopt) const;

 private:
  using RuleKey = std::pair<std::string, std::string>;  // configuration, rule

  // Every sink's delivery counts, by description (under mutex_).
  std::map<std::string, SinkDeliveryCounts> deliveries_by_sink() const;

  mutable std::mutex mutex_;
  std::map<TrialFormat, std::int64_t> steps_, tensors_, values_;
  std::map<TrialFormat, std::uint64_t> bytes_;
  std::int64_t jobs_found_ = 0;
  std::map<RuleKey, std::int64_t> evaluations_, firings_, incidents_opened_, incidents_resolved_;
  std::map<std::string, std::int64_t> sink_events_, sink_failures_, synchronous_deliveries_;
  struct TrackedSink {
    std::string name;
    int holders = 0;
    SinkDeliveryCounts baseline;  // its counts when first tracked
  };
  std::map<const Sink*, TrackedSink> tracked_sinks_;
  std::map<std::string, SinkDeliveryCounts> settled_deliveries_;  // of sinks no longer tracked
  // rulestream_event_latency_seconds: the count of each bucket of kLatencyBuckets alone (not
  // cumulative), then of the +Inf bucket alone.
  std::array<std::int64_t, kLatencyBuckets.size() + 1> latency_counts_{};
  double latency_sum_ = 0.0;
  std::int64_t latency_count_ = 0;
};

// A label value as Prometheus' text format writes it: backslash, double quote and line feed
// escaped.
std::string prometheus_label_value(std::string_view value);

}  // namespace rulestream
