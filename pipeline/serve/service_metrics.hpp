#pragma once

// The service's counters, and their rendering in Prometheus' text exposition format (version
// 0.0.4): metric names in snake_case under `rulestream_`, counters ending in `_total`, units in
// the name (`_bytes`), label values escaped.

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "pipeline/graph/trial_presence.hpp"
#include "pipeline/serve/job_registry.hpp"

namespace rulestream {

// Thread-safe: every member may be called from any thread (one mutex; the counts are added
// at job-poll and rule-event rates, far below what a mutex costs).
class ServiceMetrics {
 public:
  // What a job read since its last report: smdebug steps and tensors, TensorBoard values
  // (scalars and histograms), bytes of event files.
  void add_read(TrialFormat format, std::int64_t steps, std::int64_t tensors, std::int64_t values,
                std::uint64_t bytes);
  void add_jobs_found(std::int64_t count);
  // Steps (TensorBoard values) a rule evaluated; counted when its job ends.
  void add_evaluations(const std::string& rule_configuration, const std::string& rule,
                       std::int64_t count);
  void add_firing(const std::string& rule_configuration, const std::string& rule);
  // An event handed to a sink of the service (`sink` as Sink::describe() says it: no secret),
  // and one whose write threw.
  void add_sink_event(const std::string& sink);
  void add_sink_failure(const std::string& sink);

  // Every metric, with `jobs` (a count by state, as JobRegistry::count_by_state) as the
  // rulestream_jobs gauge.
  std::string render(const std::map<JobState, std::size_t>& jobs) const;

 private:
  using RuleKey = std::pair<std::string, std::string>;  // configuration, rule

  mutable std::mutex mutex_;
  std::map<TrialFormat, std::int64_t> steps_, tensors_, values_;
  std::map<TrialFormat, std::uint64_t> bytes_;
  std::int64_t jobs_found_ = 0;
  std::map<RuleKey, std::int64_t> evaluations_, firings_;
  std::map<std::string, std::int64_t> sink_events_, sink_failures_;
};

// A label value as Prometheus' text format writes it: backslash, double quote and line feed
// escaped.
std::string prometheus_label_value(std::string_view value);

}  // namespace rulestream
