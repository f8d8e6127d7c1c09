#pragma once

// What a job of the service writes its events through: its sinks (the service's shared ones
// and its own rules file's), counted, and the registry.

#include <memory>
#include <optional>
#include <string>

#include "apps/serve/job_registry.hpp"
#include "apps/serve/service_metrics.hpp"
#include "sinks/sink.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {

// A sink a job writes to, counted for /metrics by the sink's description (no secret: webhook
// URLs are redacted): one of the service's, shared by every job (one file, one webhook queue
// for all), or one of the job's own rules file. Events handed and refused are counted here; what
// became of them, by the sink's own delivery counts (ServiceMetrics::track_sink, while this
// lives), or, for a sink that delivers within write(), as each write returns.
// Thread-safe as the sink is. flush() waits for the sink's every event unless the sink delivers
// later (a webhook) and `job_waits_for_delivery` is false: a job's end must not wait on a peer
// that may be down (the queue goes on delivering, and is dead-lettered within a bound when the
// service stops).
class CountedSink final : public Sink {
 public:
  CountedSink(std::shared_ptr<Sink> sink, ServiceMetrics& metrics,
              bool job_waits_for_delivery = true);
  ~CountedSink() override;
  CountedSink(const CountedSink&) = delete;
  CountedSink& operator=(const CountedSink&) = delete;
  std::string describe() const override { return name_; }
  void write(const RuleEvent& event) override;
  void flush() override {
    if (job_waits_for_delivery_ || !sink_->delivers_later()) sink_->flush();
  }
  std::optional<SinkDeliveryCounts> delivery() const override { return sink_->delivery(); }
  bool delivers_later() const override { return sink_->delivers_later(); }
  std::int64_t undelivered(std::string_view trial) const override {
    return sink_->undelivered(trial);
  }
  // The sink itself, for whoever keeps it delivering after the job.
  const std::shared_ptr<Sink>& wrapped() const { return sink_; }

 private:
  std::shared_ptr<Sink> sink_;
  ServiceMetrics& metrics_;
  const std::string name_;
  const bool delivers_in_write_;  // keeps no delivery counts of its own
  const bool job_waits_for_delivery_;
};

// Where a job's events reach the registry (/api) and the rule counters and latency histogram
// (/metrics). Listed after the configured sinks and named by no notify action, so it gets
// every rule's events. write() is thread-safe (registry and metrics are).
class RegistrySink final : public Sink {
 public:
  RegistrySink(std::string job, JobRegistry& registry, ServiceMetrics& metrics);
  std::string describe() const override { return "the service's view of job " + job_; }
  // For an smdebug job, before its pipeline runs (not while it writes): the trial that knows
  // when each step arrived, for the latency of the events about it.
  void time_events_from(Trial trial) { trial_ = std::move(trial); }
  void write(const RuleEvent& event) override;
  void flush() override {}

 private:
  const std::string job_;
  JobRegistry& registry_;
  ServiceMetrics& metrics_;
  std::optional<Trial> trial_;
};

}  // namespace rulestream
