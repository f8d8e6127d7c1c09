#pragma once

// What every job reports, whatever its format: how far its reading has got while it runs
// (JobProgress), and what its run ended with (JobOutcome). A format's pipeline reports more for
// its own tests and benchmarks (RulePipeline's PipelineReport, SeriesPipeline's
// SeriesReport, both a JobOutcome); commands, the service and the report read only this.

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/model/exceptions.hpp"
#include "core/model/rule_event.hpp"

namespace rulestream {

// Readable from any thread while the job runs (a progress line, a service's /metrics). Each
// format fills what it reads: an smdebug trial its index files, steps and tensors; a TensorBoard
// logdir its values. Both fill the bytes of event files and the last step.
struct JobProgress {
  std::atomic<std::int64_t> index_files{0};       // index files read
  std::atomic<std::int64_t> index_files_seen{0};  // index files found
  std::atomic<std::int64_t> tensors_decoded{0};
  std::atomic<std::int64_t> steps_released{0};  // steps rules were given
  std::atomic<std::int64_t> values{0};          // scalar and histogram values read
  std::atomic<std::uint64_t> event_bytes{0};    // of event files
  std::atomic<std::int64_t> last_step{-1};      // the highest step read
};

struct JobOutcome {
  std::vector<RuleEvent> statuses;  // one per rule, in configuration order (RuleLedger)
  std::int64_t conditions_met = 0;
  bool rule_errors = false;  // some rule ended in Error
  std::vector<TrialProblem> problems;
  // The source failed before the job was read to the end (a listing refused, storage gone):
  // what failed, naming the storage; empty when it did not. Every rule that did not fire then
  // ends in Error.
  std::string source_failure;
  // Stopped (request_stop) before everything found was read.
  bool interrupted = false;

  // For a person, each a phrase. What was read: "12 steps (0 incomplete), 12 index files, 24
  // tensors, 1.0 KB" or "2 runs, 3 event files, 1.0 KB, 84 values"; what a rule evaluates one
  // at a time ("steps", "values"); what an interrupted run left unread ("12 index files").
  std::string read;
  std::string evaluated_unit = "steps";
  std::string unread;
};

}  // namespace rulestream
