#pragma once

// Where the rules fired during a report's replay: a sink that keeps, per rule configuration,
// every firing step and the first firing's message, and the table rows made of them and the
// rules' final statuses.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "apps/report/job_report.hpp"
#include "core/model/rule_event.hpp"
#include "sinks/sink.hpp"

namespace rulestream {

// Thread-safe: the pipeline's rule nodes record from several threads at once; one lock guards
// the map (a firing is a rare event next to the values read, so the lock costs nothing).
class FiringRecorder {
 public:
  // A sink for the pipeline (which owns its sinks) that records into this recorder; the
  // recorder must outlive it.
  std::unique_ptr<Sink> sink();
  void record(const RuleEvent& event);

  // The rules table: one row per status, in the statuses' order (configuration order), with
  // the firings this sink saw for that configuration. Call after the pipeline ran.
  std::vector<RuleOutcome> outcomes(const std::vector<RuleEvent>& statuses) const;
  // Every step where some rule fired, sorted, each once: what downsampling must keep.
  std::vector<std::int64_t> all_firing_steps() const;
  // The verdicts: each incident, and each rule whose firings were not grouped, by the step
  // they began. Call after the pipeline ran.
  std::vector<Verdict> verdicts() const;

 private:
  struct Firings {
    std::vector<std::int64_t> steps;
    std::string first_message;
    std::int64_t first_step = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::string, Firings> by_configuration_;
  std::map<std::string, Verdict> by_incident_;
};

}  // namespace rulestream
