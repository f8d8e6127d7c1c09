#include "apps/serve/service_metrics.hpp"

#include <algorithm>
#include <sstream>

namespace rulestream {

std::string prometheus_label_value(std::string_view value) {
  std::string escaped;
  escaped.reserve(value.size());
  for (const char c : value) {
    if (c == '\\') {
      escaped += "\\\\";
    } else if (c == '"') {
      escaped += "\\\"";
    } else if (c == '\n') {
      escaped += "\\n";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

namespace {

void header(std::ostream& out, std::string_view name, std::string_view type,
            std::string_view help) {
  out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
}

template <typename Count>
void by_format(std::ostream& out, std::string_view name, std::string_view help,
               const std::map<TrialFormat, Count>& counts) {
  header(out, name, "counter", help);
  for (const TrialFormat format :
       {TrialFormat::Smdebug, TrialFormat::TensorBoard, TrialFormat::TextMetrics}) {
    const auto found = counts.find(format);
    out << name << "{format=\"" << trial_format_name(format) << "\"} "
        << (found == counts.end() ? Count{0} : found->second) << '\n';
  }
}

void by_rule(std::ostream& out, std::string_view name, std::string_view help,
             const std::map<std::pair<std::string, std::string>, std::int64_t>& counts) {
  header(out, name, "counter", help);
  for (const auto& [key, count] : counts) {
    out << name << "{rule_configuration=\"" << prometheus_label_value(key.first) << "\",rule=\""
        << prometheus_label_value(key.second) << "\"} " << count << '\n';
  }
}

void by_sink(std::ostream& out, std::string_view name, std::string_view help,
             const std::map<std::string, std::int64_t>& counts) {
  header(out, name, "counter", help);
  for (const auto& [sink, count] : counts) {
    out << name << "{sink=\"" << prometheus_label_value(sink) << "\"} " << count << '\n';
  }
}

}  // namespace

void ServiceMetrics::add_read(TrialFormat format, std::int64_t steps, std::int64_t tensors,
                              std::int64_t values, std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  steps_[format] += steps;
  tensors_[format] += tensors;
  values_[format] += values;
  bytes_[format] += bytes;
}

void ServiceMetrics::add_jobs_found(std::int64_t count) {
  std::lock_guard lock(mutex_);
  jobs_found_ += count;
}

void ServiceMetrics::add_evaluations(const std::string& rule_configuration, const std::string& rule,
                                     std::int64_t count) {
  std::lock_guard lock(mutex_);
  evaluations_[{rule_configuration, rule}] += count;
}

void ServiceMetrics::add_firing(const std::string& rule_configuration, const std::string& rule) {
  std::lock_guard lock(mutex_);
  ++firings_[{rule_configuration, rule}];
}

void ServiceMetrics::add_incident_opened(const std::string& rule_configuration,
                                         const std::string& rule) {
  std::lock_guard lock(mutex_);
  ++incidents_opened_[{rule_configuration, rule}];
}

void ServiceMetrics::add_incident_resolved(const std::string& rule_configuration,
                                           const std::string& rule) {
  std::lock_guard lock(mutex_);
  ++incidents_resolved_[{rule_configuration, rule}];
}

void ServiceMetrics::add_sink_event(const std::string& sink) {
  std::lock_guard lock(mutex_);
  ++sink_events_[sink];
}

void ServiceMetrics::add_sink_failure(const std::string& sink) {
  std::lock_guard lock(mutex_);
  ++sink_failures_[sink];
}

void ServiceMetrics::add_synchronous_delivery(const std::string& sink) {
  std::lock_guard lock(mutex_);
  ++synchronous_deliveries_[sink];
}

void ServiceMetrics::track_sink(const Sink& sink) {
  const std::optional<SinkDeliveryCounts> counts = sink.delivery();
  if (!counts) return;  // counted as its events are written
  std::lock_guard lock(mutex_);
  TrackedSink& tracked = tracked_sinks_[&sink];
  if (tracked.holders++ == 0) {
    tracked.name = sink.describe();
    tracked.baseline = *counts;
  }
}

void ServiceMetrics::untrack_sink(const Sink& sink) {
  std::lock_guard lock(mutex_);
  const auto found = tracked_sinks_.find(&sink);
  if (found == tracked_sinks_.end() || --found->second.holders > 0) return;
  settled_deliveries_[found->second.name] +=
      sink.delivery().value_or(found->second.baseline) - found->second.baseline;
  tracked_sinks_.erase(found);
}

std::map<std::string, SinkDeliveryCounts> ServiceMetrics::deliveries_by_sink() const {
  std::map<std::string, SinkDeliveryCounts> by_sink = settled_deliveries_;
  for (const auto& [sink, tracked] : tracked_sinks_) {
    by_sink[tracked.name] += sink->delivery().value_or(tracked.baseline) - tracked.baseline;
  }
  for (const auto& [name, count] : synchronous_deliveries_) by_sink[name].delivered += count;
  for (const auto& [name, count] : sink_failures_) by_sink[name].failures += count;
  for (const auto& [name, count] : sink_events_) by_sink[name];  // every sink that took events
  return by_sink;
}

void ServiceMetrics::observe_event_latency(double seconds) {
  if (!(seconds >= 0)) seconds = 0;  // a clock stepped back: counted, as no wait at all
  const auto bucket = std::lower_bound(kLatencyBuckets.begin(), kLatencyBuckets.end(), seconds) -
                      kLatencyBuckets.begin();
  std::lock_guard lock(mutex_);
  ++latency_counts_[static_cast<std::size_t>(bucket)];
  latency_sum_ += seconds;
  ++latency_count_;
}

std::string ServiceMetrics::render(const std::map<JobState, std::size_t>& jobs,
                                   std::optional<std::size_t> leases_held) const {
  std::ostringstream out;
  header(out, "rulestream_jobs", "gauge",
         "Jobs the service knows, by state (sharing a Redis: every instance's jobs).");
  for (const JobState state : kAllJobStates) {
    const auto found = jobs.find(state);
    out << "rulestream_jobs{state=\"" << job_state_name(state) << "\"} "
        << (found == jobs.end() ? 0 : found->second) << '\n';
  }
  if (leases_held) {
    header(out, "rulestream_coordinator_leases_held", "gauge",
           "Job leases this instance holds (the jobs it runs for the instances sharing a Redis).");
    out << "rulestream_coordinator_leases_held " << *leases_held << '\n';
  }
  std::lock_guard lock(mutex_);
  header(out, "rulestream_jobs_found_total", "counter", "Jobs found under the roots.");
  out << "rulestream_jobs_found_total " << jobs_found_ << '\n';
  by_format(out, "rulestream_steps_read_total", "smdebug steps released to the rules.", steps_);
  by_format(out, "rulestream_tensors_read_total", "smdebug tensors decoded.", tensors_);
  by_format(out, "rulestream_values_read_total", "TensorBoard scalar and histogram values read.",
            values_);
  by_format(out, "rulestream_read_bytes_total", "Bytes of event files read.", bytes_);
  by_rule(out, "rulestream_rule_evaluations_total",
          "Steps (TensorBoard values) each rule evaluated, counted when the job ends.",
          evaluations_);
  by_rule(out, "rulestream_rule_firings_total", "Conditions met, by rule.", firings_);
  by_rule(out, "rulestream_incidents_opened_total",
          "Incidents opened (a rule's firings on one series, grouped), by rule.",
          incidents_opened_);
  by_rule(out, "rulestream_incidents_resolved_total",
          "Incidents resolved (cleared, quiet, or open when their job ended), by rule.",
          incidents_resolved_);
  by_sink(out, "rulestream_sink_events_total", "Rule events handed to each sink.", sink_events_);
  const auto deliveries = deliveries_by_sink();
  const auto delivery_family = [&](std::string_view name, std::string_view help,
                                   std::int64_t SinkDeliveryCounts::*count) {
    std::map<std::string, std::int64_t> counts;
    for (const auto& [sink, delivery] : deliveries) counts[sink] = delivery.*count;
    by_sink(out, name, help, counts);
  };
  delivery_family("rulestream_sink_deliveries_total",
                  "Rule events (Alertmanager: alert batches) each sink delivered.",
                  &SinkDeliveryCounts::delivered);
  delivery_family("rulestream_sink_retries_total",
                  "Delivery attempts each sink made after a failed one.",
                  &SinkDeliveryCounts::retries);
  delivery_family("rulestream_sink_failures_total",
                  "Delivery attempts that failed (a refused write included).",
                  &SinkDeliveryCounts::failures);
  delivery_family("rulestream_sink_dead_letters_total",
                  "Deliveries given up on and kept in the sink's dead-letter file.",
                  &SinkDeliveryCounts::dead_letters);
  header(out, "rulestream_event_latency_seconds", "histogram",
         "Seconds from a step's data landing to a rule event about it (smdebug jobs).");
  std::int64_t cumulative = 0;
  for (std::size_t i = 0; i < kLatencyBuckets.size(); ++i) {
    cumulative += latency_counts_[i];
    out << "rulestream_event_latency_seconds_bucket{le=\"" << kLatencyBuckets[i] << "\"} "
        << cumulative << '\n';
  }
  out << "rulestream_event_latency_seconds_bucket{le=\"+Inf\"} " << latency_count_ << '\n'
      << "rulestream_event_latency_seconds_sum " << latency_sum_ << '\n'
      << "rulestream_event_latency_seconds_count " << latency_count_ << '\n';
  return out.str();
}

}  // namespace rulestream
