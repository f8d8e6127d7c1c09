#pragma once

// The sinks a job of the service writes to besides its own rules file's: the service's shared
// sinks, and the registry's.

#include <memory>
#include <optional>
#include <string>

#include "pipeline/serve/job_registry.hpp"
#include "pipeline/serve/service_metrics.hpp"
#include "pipeline/trial/trial.hpp"
#include "sinks/sink.hpp"

namespace rulestream {

// A sink of the service, shared by every job (one file, one webhook queue for all): this job's
// events go to it, counted by the sink's description (no secret: webhook URLs are redacted).
// Thread-safe as the shared sink is; flush() waits for the shared sink's every event.
class SharedSink final : public Sink {
 public:
  SharedSink(std::shared_ptr<Sink> sink, ServiceMetrics& metrics);
  std::string describe() const override { return name_; }
  void write(const RuleEvent& event) override;
  void flush() override { sink_->flush(); }

 private:
  std::shared_ptr<Sink> sink_;
  ServiceMetrics& metrics_;
  const std::string name_;
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
