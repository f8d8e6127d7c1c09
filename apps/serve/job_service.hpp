#pragma once

// The service's jobs: a supervisor thread that scans the roots every poll interval, registers
// the jobs it finds, starts them (at most `max_running` at once; the others wait, Queued, in
// the order they were found), checks the running ones (progress, idle timeout) and lets go of
// the ended ones. A job that fails (a rules file that does not parse, storage that refuses it)
// ends in Error on its own thread; the others go on.
//
// With a coordinator (`serve --coordinator redis://...`), several instances share the jobs
// under the same roots: every instance finds every job, but runs only those it holds a lease on
// (job_coordinator.hpp); a job another instance holds waits here, Queued, and is taken over
// when that lease lapses (its owner died): its pipeline reads the job from its start again
// (a replay, as fast as the disk allows) and goes on following it, and the events it had
// published already are not published again. The service sinks get their events through the
// Redis stream (event_delivery.hpp). A job's state is published for the other instances each
// poll. Stopping hands the running jobs over (their leases released) instead of ending them.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "apps/serve/event_delivery.hpp"
#include "apps/serve/job_coordinator.hpp"
#include "apps/serve/job_discovery.hpp"
#include "apps/serve/job_registry.hpp"
#include "apps/serve/job_runner.hpp"
#include "apps/serve/service_metrics.hpp"
#include "apps/serve/shared_configuration.hpp"
#include "apps/serve/shared_inotify.hpp"

namespace rulestream {

struct JobServiceOptions {
  std::vector<std::string> roots;  // folders, or s3://bucket/prefix
  // Rules, sink configurations (matching the service sinks), storage options, TensorBoard tag
  // names and the poll interval (how often roots are scanned and jobs looked at).
  PipelineConfig base;
  std::chrono::milliseconds idle_timeout{std::chrono::minutes(5)};
  // Every local job's watcher follows through the service's one inotify instance. Off (for
  // benchmarks' comparisons), each opens one of its own, as `watch` does: past the user's limit
  // (128 by default) the others follow by rescanning every poll.
  bool share_inotify = true;
  // A local smdebug job's safety-net rescan while inotify follows it (job_runner.hpp).
  std::chrono::milliseconds inotify_rescan_interval{std::chrono::seconds(30)};
  // 1,000 small live jobs measured at 377 MiB and 1,005 threads (benchmarks/RESULTS.md).
  std::size_t max_running = 1000;
  std::size_t history = 1000;         // ended jobs kept
  std::size_t events_per_job = 1000;  // rule events kept per job
  std::string job_rules_file = "rulestream-rules.json";
  // Set: the instances sharing this Redis share the jobs. Unset: this one runs all it finds.
  std::optional<CoordinatorOptions> coordinator;
  // Where the dead letters of a job's own sinks that name no file go (state_folder.hpp); empty:
  // where their sink says by default.
  std::filesystem::path state_dir;
};

// Thread-safe: registry(), metrics() and ready() from any thread; start() and stop() from the
// owning thread. The destructor stops.
class JobService {
 public:
  // StorageError naming a root that cannot be listed (JobDiscovery); RedisError naming the
  // coordinator's server when it cannot be reached.
  // `service_sinks` match options.base.sinks; stdout sinks of a job's own rules file write to
  // `out`; `log` gets one line for each job found and each problem of a scan.
  JobService(JobServiceOptions options, std::vector<std::shared_ptr<Sink>> service_sinks,
             std::ostream& out, std::function<void(const std::string&)> log);
  ~JobService();
  JobService(const JobService&) = delete;
  JobService& operator=(const JobService&) = delete;

  void start();
  // Stops every running job (each drains and reports its rules' statuses) and the supervisor.
  void stop();

  // After the first scan of the roots has registered what they hold.
  bool ready() const { return ready_; }
  // Why the service cannot do its work now, for /readyz: the roots not scanned yet, or the
  // coordinator's Redis unusable (its latest use failed: the jobs' states or the events'
  // delivery); empty when it can.
  std::string unready_reason() const;
  const JobRegistry& registry() const { return registry_; }
  const ServiceMetrics& metrics() const { return metrics_; }
  // Null without a coordinator.
  const JobCoordinator* coordinator() const { return coordinator_.get(); }
  // What the job runs, or would run here (job_pipeline_config): for the report page of a job
  // another instance runs. Throws as job_pipeline_config does.
  std::shared_ptr<const PipelineConfig> configuration_of(const JobSnapshot& job) const;
  // Rule events of `trial` (JobSnapshot::trial) still queued in this instance's sinks, the
  // service's and the ended jobs' own: written, not yet delivered nor dead-lettered.
  std::int64_t undelivered(std::string_view trial) const;

 private:
  // A job running here; with a coordinator, under its lease.
  struct Running {
    std::unique_ptr<JobRunner> runner;
    std::optional<JobLease> lease;
    std::shared_ptr<JobEventPublisher> publisher;
    bool handed_over = false;  // stopped for another instance to take (stopping, lease lost)
  };

  void supervise();
  // Every poll interval: the roots scanned, ended jobs settled, queued ones started, running
  // ones checked, and with a coordinator the states exchanged (coordinate).
  void tick();
  // When a job ends between polls: it is settled and the queued jobs started in its place,
  // nothing more. A poll's other work (a scan of every root, every instance's documents read
  // from Redis) grows with all the jobs, not with the one that ended: done at every end, it
  // kept the supervisor, and Redis, from starting the next job (issue 24, per added core).
  void settle_and_start();
  void set_supervising_problem(const std::string& problem);
  void settle_ended();
  void start_jobs();
  void start_job(FoundJob job, std::optional<JobLease> lease);
  // Stops a running job without ending it: its events and state are no longer published.
  void hand_over(Running& running);
  // What a coordinated job that has stopped leaves: ended (its state and end published), or
  // handed over (its lease released and the job Queued here again).
  void settle(Running& running);
  // With a coordinator: each running job's state published (one that is fenced is handed
  // over), the leases lost handed over, and every instance's documents read.
  void coordinate();
  std::string document(const std::string& id) const;

  const std::chrono::milliseconds poll_interval_;
  const std::size_t max_running_;
  std::function<void(const std::string&)> log_;
  JobRegistry registry_;
  ServiceMetrics metrics_;
  // Before context_: its hub (in context_.base, and every job's copy) goes before it does.
  SharedInotify inotify_;
  JobRunnerContext context_;  // points at registry_ and metrics_
  JobDiscovery discovery_;
  std::unique_ptr<JobCoordinator> coordinator_;
  SharedConfiguration shared_;  // with a coordinator: what the instances agree on
  std::unique_ptr<EventDelivery> delivery_;

  // Touched by the supervisor thread only.
  std::deque<FoundJob> queued_;
  std::list<Running> running_;
  std::set<std::string> said_;  // scan problems already logged

  std::mutex mutex_;
  std::condition_variable wake_;  // a job ended, or stop
  bool stopping_ = false;
  bool job_ended_ = false;
  std::atomic<bool> ready_{false};
  mutable std::mutex supervising_mutex_;
  std::string supervising_problem_;  // why the latest tick failed, with a coordinator
  std::thread supervisor_;
};

}  // namespace rulestream
