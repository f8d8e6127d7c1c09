#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/model/rule_event.hpp"
#include "engine/graph/job_outcome.hpp"
#include "engine/graph/pipeline_config.hpp"
#include "rules/rule_registry.hpp"
#include "sinks/sink.hpp"
#include "trial/api/trial.hpp"

namespace rulestream {

// What a run did: what every job reports (JobOutcome: statuses, problems, how it ended, what it
// read), and what the smdebug engine measures besides, for its tests and benchmarks.
struct PipelineReport : JobOutcome {
  // CPU time each rule spent evaluating steps, in configuration order (what a rule costs:
  // rules run in parallel, so these may add up to more than the run's time).
  std::vector<std::chrono::nanoseconds> rule_busy;
  // CPU time each rule's serial node was busy, in configuration order: all of rule_busy for a
  // rule that evaluates step after step, less its own thread's share of the per-tensor work
  // the rule spreads over the threads within a step (Rule::for_ranges_in_parallel); only
  // putting outcomes in order for one whose steps are evaluated in parallel (RuleStage).
  std::vector<std::chrono::nanoseconds> rule_serial_busy;
  // CPU time the step assembler (a serial node: steps across workers, the store's ingestion)
  // spent on its inputs, less its share of the ingestion the store spreads over the threads
  // (TrialStore::parallel_ingest_cpu): with rule_serial_busy, what bounds the speedup more
  // threads can give.
  std::chrono::nanoseconds assembler_busy{};
  // How long the pipeline's threads waited, all together, for the trials rules compare with to
  // load or refresh (TrialStore::refresh_waited): none for their first load, which rules are
  // not given steps before (RuleStage's `held`).
  std::chrono::nanoseconds other_trials_waited{};
  // How many times the trials rules compare with listed their storage, all together: each
  // rule invocation pins them, and a live one refreshes then (callers at once share one).
  std::uint64_t other_trials_refreshes = 0;
  std::int64_t steps_released = 0;
  std::int64_t incomplete_steps = 0;
  std::int64_t late_landings = 0;
  std::int64_t index_files = 0;
  std::int64_t tensors_decoded = 0;
  std::uint64_t event_bytes = 0;
  // A replay stopped early (request_stop, `interrupted`): the steps it had begun were
  // finished, and these index files of later steps were never read.
  std::int64_t index_files_unread = 0;
  // The trial's cache of decoded values kept as copies (from S3, or compressed files): its
  // budget (--max-memory, shared by the trials) and the most it held at once.
  std::size_t value_cache_budget = 0;
  std::size_t value_cache_peak = 0;
  // The job's memory budget (--max-memory), which the trials' caches and every inflation of a
  // compressed event file draw on together: the most they held at once (never above it), and
  // how many times an inflation waited for another's bytes.
  std::size_t memory_budget_peak = 0;
  std::uint64_t memory_budget_waits = 0;
};

// The streaming engine of DESIGN.md: a source finds index files (a local folder, scanned once
// for replay or followed with inotify for watch); a parallel node reads each one's event file,
// decodes the tensors rules need and reduces them in one pass (cached in the trial's store);
// a serial node assembles steps across workers and releases them in global-step order; every
// rule runs serially over the released steps, all rules in parallel; events fan out to the
// sinks. Memory stays bounded: files in flight are limited by the decode node's concurrency;
// decoded values, inflated event files and their inflation share one budget of
// config.max_memory (reductions are kept for every step).
class RulePipeline {
 public:
  // Builds the rules (RuleConfigError for a bad configuration) and opens the trials
  // (StorageError for a path that is not a trial folder). Nothing is read yet.
  RulePipeline(PipelineConfig config, std::vector<std::unique_ptr<Sink>> sinks,
               const RuleRegistry& registry = RuleRegistry::builtin());
  ~RulePipeline();

  // Runs to the end of the job (watch: the end-of-job marker, then a drain) or of the files
  // (replay), then reports each rule's status to the sinks. Call once.
  PipelineReport run();

  // From any thread or a signal handler's thread: stop following, drain what was found,
  // report. Safe to call before or during run().
  void request_stop();

  // Index files, steps, tensors and bytes read so far (JobProgress); any thread.
  const JobProgress& progress() const;
  // The base trial, as rules see it.
  Trial base_trial() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rulestream
