#pragma once

// One job followed by its rules (open_job: its format's pipeline behind the Job interface) in
// follow mode, on a thread of its own, until the job's end-of-job marker, an idle timeout or
// the service stopping. An smdebug job that had ended before it started (its end marker older
// than the end-of-job grace) is replayed instead. What it reads and what its rules find goes
// to the registry and the metrics as it happens.
//
// Threads: the runner's thread blocks in the pipeline's run() (an smdebug pipeline's decoding
// and rules run as tasks in TBB's shared worker pool; a logdir's follow reads on the runner's
// thread). So a job costs a thread (and an smdebug job its watcher's io_context on it) while it
// runs: JobService bounds how many run at once. A thread per job rather than runners sharing a
// few threads: a job's pipeline blocks in run() by design (RulePipeline, SeriesPipeline),
// and a sleeping thread costs its stack's touched pages and kernel state, ~0.1 MiB, and no CPU:
// 1,000 jobs measured at 1,005 threads and 377 MiB in all (docs/decisions.md).

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "apps/serve/job_discovery.hpp"
#include "apps/serve/job_registry.hpp"
#include "apps/serve/lingering_sinks.hpp"
#include "apps/serve/service_metrics.hpp"
#include "engine/graph/pipeline_config.hpp"
#include "sinks/sink.hpp"

namespace rulestream {

class JobEventPublisher;
class RegistrySink;
class Job;

// What every job of a service shares. Outlives every runner.
struct JobRunnerContext {
  JobRegistry* registry = nullptr;
  ServiceMetrics* metrics = nullptr;
  // Rules, TensorBoard tag names, storage options, poll interval, and the service sinks'
  // configurations (sinks[i] describes service_sinks[i]).
  PipelineConfig base;
  std::vector<std::shared_ptr<Sink>> service_sinks;
  // Where a job's own sinks that still hold events when it ends go on delivering (a job's end
  // never waits on a peer).
  std::shared_ptr<LingeringSinks> lingering;
  // The service's state folder: the dead letters of a job's own sinks that name no file.
  std::filesystem::path state_dir;
  // Where stdout sinks of a job's own rules file write.
  std::ostream* out = nullptr;
  // Name of the per-job rules file: JOB/NAME replaces the base's rules and tag names (and adds
  // its own sinks) for that job.
  std::string job_rules_file;
  // A job whose pipeline has read nothing new (no index file, no grown event file) for this
  // long is finished.
  std::chrono::milliseconds idle_timeout{std::chrono::minutes(5)};
  // A local smdebug job followed through the service's inotify instance (base.inotify_hub)
  // rescans its folders this often, not every poll: inotify reports each file, an overflow of
  // its queue rescans every job at once, and the rescan is only the safety net for what it
  // cannot report. Rescanning 1,000 jobs every second cost the service 15-35% more CPU than
  // every 30 s (benchmarks/RESULTS.md).
  std::chrono::milliseconds inotify_rescan_interval{std::chrono::seconds(30)};
};

// What `job` runs: the service's configuration for its path, with its own rules file's rules,
// TensorBoard names and sinks when it has one (read through the job's storage), followed or,
// for an smdebug job that ended before this look, replayed. Throws what reading and parsing
// the rules file throw (naming it), RuleConfigError when there are no rules to run.
std::shared_ptr<const PipelineConfig> job_pipeline_config(const FoundJob& job,
                                                          const JobRunnerContext& context);

// Thread-safe: check() and request_stop() may be called from any thread while the job runs
// (the supervisor's); done() from any thread. The destructor stops the job and joins it.
class JobRunner {
 public:
  // Starts the job's thread at once. `on_done` is called on it when the job has ended.
  // `publisher`, when instances share a Redis: the service sinks' events go through its stream
  // (StreamSink) instead of to the sinks.
  JobRunner(FoundJob job, const JobRunnerContext& context, std::function<void()> on_done,
            std::shared_ptr<JobEventPublisher> publisher = nullptr);
  ~JobRunner();
  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  // For the supervisor, every poll: reports what the job read since the last check, and ends
  // a job whose pipeline has read nothing new for the idle timeout. (The pipeline's own
  // counts, not a listing of the job: a job of 100,000 files costs the check nothing.)
  void check(std::chrono::steady_clock::time_point now);
  void request_stop();
  bool done() const { return done_; }
  const FoundJob& job() const { return job_; }

 private:
  class Published;

  void run();
  // Asks the running pipeline, if any, to stop (under mutex_).
  void stop_pipeline();
  // The service's shared sinks, the job's own, and last the one that feeds the registry
  // (handed back through `registry_sink` when asked for). None makes the job's end wait on a
  // peer; the job's own sinks that deliver later are added to `own_delivering_later`, for
  // context_.lingering once the job ends.
  std::vector<std::unique_ptr<Sink>> job_sinks(
      const PipelineConfig& config, RegistrySink** registry_sink,
      std::vector<std::shared_ptr<Sink>>* own_delivering_later) const;
  // What the job has read so far, as it counts it (JobProgress). While none of it changes, the
  // job has no new data: an smdebug job writes whole files, each new index file counted as
  // it is taken up; a logdir's files grow, and their listed size counts.
  struct ReadCounts {
    std::int64_t index_files = 0;  // smdebug: index files taken up
    std::int64_t steps = 0;        // smdebug
    std::int64_t tensors = 0;      // smdebug
    std::int64_t values = 0;       // TensorBoard
    std::uint64_t bytes = 0;
    std::int64_t last_step = -1;
    friend bool operator==(const ReadCounts&, const ReadCounts&) = default;
  };
  // The running job's counts (under mutex_, while a job runs).
  ReadCounts running_counts() const;
  // Adds to the metrics what was read since the last report, and sets the last step.
  void report_read(const ReadCounts& now);

  const FoundJob job_;
  const JobRunnerContext& context_;
  const std::function<void()> on_done_;
  const std::shared_ptr<JobEventPublisher> publisher_;

  std::mutex mutex_;  // guards what follows, and the pipelines' lifetime against check()
  Job* running_ = nullptr;
  bool stop_requested_ = false;
  ReadCounts reported_;  // what the metrics have of the job
  std::chrono::steady_clock::time_point last_change_ = std::chrono::steady_clock::now();

  std::atomic<bool> done_{false};
  std::thread thread_;  // last: started once everything above is
};

}  // namespace rulestream
