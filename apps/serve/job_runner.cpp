#include "apps/serve/job_runner.hpp"

#include <algorithm>
#include <filesystem>

#include "apps/serve/job_sinks.hpp"
#include "apps/serve/state_folder.hpp"
#include "apps/serve/stream_sink.hpp"
#include "core/model/trial_layout.hpp"
#include "engine/graph/configuration_check.hpp"
#include "engine/graph/job.hpp"
#include "engine/graph/rules_file.hpp"
#include "engine/graph/sink_factory.hpp"
#include "sources/open/storage_factory.hpp"

namespace rulestream {
namespace {

// Whether the job's end-of-job marker landed at least `grace` ago (by its modification time;
// false when there is none, or its time is unknown or ahead of this clock). Nothing more will
// land in such a job: a follow of it would read it all and then wait out the grace for files
// that do not come, a second per job, which bounded a service replaying archived jobs at
// --max-running jobs a second however many cores it had (benchmarks/serve_scaleout.py).
bool ended_before(const Storage& storage, std::chrono::milliseconds grace) {
  const std::vector<StoredObject> marker = storage.list(kEndOfJobMarker);
  if (marker.empty() || marker.front().path != kEndOfJobMarker) return false;
  if (marker.front().modified_ns <= 0) return false;
  // A marker with no index file beside it is a job still being copied (cp -a keeps the marker's
  // old time): it is followed, and what lands while it settles is read.
  if (storage.list(std::string(kIndexDir)).empty()) return false;
  const auto now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  return now_ns - marker.front().modified_ns >=
         std::chrono::duration_cast<std::chrono::nanoseconds>(grace).count();
}

}  // namespace

std::shared_ptr<const PipelineConfig> job_pipeline_config(const FoundJob& job,
                                                          const JobRunnerContext& context) {
  auto config = std::make_shared<PipelineConfig>(context.base);
  config->paths = {job.path.string()};
  // Through the job's storage, so that a job on S3 has its own rules file too.
  const auto storage = open_storage(job.path.string(), context.base.storage);
  // An archived smdebug job is replayed; any other is followed until its end (a logdir has no
  // end marker).
  config->follow =
      job.format != TrialFormat::Smdebug || !ended_before(*storage, config->end_of_job_grace);
  // The service's poll, for every format.
  config->poll_interval_chosen = true;
  // Followed through the service's inotify instance, a local job (an smdebug trial or a
  // logdir) rescans only as a safety net. The poll stays what it is for storage that is not a
  // local folder.
  if (config->inotify_hub && std::filesystem::is_directory(job.path)) {
    config->poll_interval = std::max(config->poll_interval, context.inotify_rescan_interval);
  }
  if (storage->exists(context.job_rules_file)) {
    RulesFile file = parse_rules_file(storage->read(context.job_rules_file).as_string_view(),
                                      (job.path / context.job_rules_file).string());
    config->rules = std::move(file.rules);
    config->tensorboard_names = std::move(file.tensorboard_names);
    if (!context.state_dir.empty()) place_dead_letters(file.sinks, context.state_dir);
    for (auto& sink : file.sinks) config->sinks.push_back(std::move(sink));
  }
  // No rule named by the service or the job: the job's format's defaults.
  if (config->rules.empty()) config->rules = default_rules_for(job.format);
  return config;
}

// While it lives, check() and request_stop() reach the running job (one asked to stop before
// it started is asked now); however run() ends, they let go of it before it goes.
class JobRunner::Published {
 public:
  Published(JobRunner& runner, Job& job) : runner_(runner) {
    std::lock_guard lock(runner_.mutex_);
    runner_.running_ = &job;
    if (runner_.stop_requested_) runner_.stop_pipeline();
  }
  ~Published() {
    std::lock_guard lock(runner_.mutex_);
    runner_.running_ = nullptr;
  }
  Published(const Published&) = delete;
  Published& operator=(const Published&) = delete;

 private:
  JobRunner& runner_;
};

JobRunner::JobRunner(FoundJob job, const JobRunnerContext& context, std::function<void()> on_done,
                     std::shared_ptr<JobEventPublisher> publisher)
    : job_(std::move(job)),
      context_(context),
      on_done_(std::move(on_done)),
      publisher_(std::move(publisher)) {
  thread_ = std::thread([this] { run(); });
}

JobRunner::~JobRunner() {
  request_stop();
  thread_.join();
}

std::vector<std::unique_ptr<Sink>> JobRunner::job_sinks(
    const PipelineConfig& config, RegistrySink** registry_sink,
    std::vector<std::shared_ptr<Sink>>* own_delivering_later) const {
  std::vector<std::unique_ptr<Sink>> sinks;
  for (std::size_t i = 0; i < config.sinks.size(); ++i) {
    if (publisher_ && config.sinks[i].type == "alertmanager") {
      // Its alerts live in one sink, the job's own: written by the owner (OwnerWrittenSink).
      // Its resends too: a paused former owner that wakes resends nothing.
      auto still_owner = [publisher = publisher_] { return publisher->still_owner(); };
      sinks.push_back(std::make_unique<OwnerWrittenSink>(
          std::make_unique<CountedSink>(
              make_sink(config.sinks[i], *context_.out, std::move(still_owner)), *context_.metrics),
          publisher_));
      continue;
    }
    if (publisher_) {  // delivered by whichever instance reads it from the stream
      const bool jobs_own = i >= context_.service_sinks.size();
      sinks.push_back(std::make_unique<StreamSink>(
          publisher_, i,
          jobs_own ? describe_sink(config.sinks[i]) : context_.service_sinks[i]->describe(),
          *context_.metrics, jobs_own));
      continue;
    }
    // The service's, or the job's own rules file's: its own, as a watch of it would have.
    const bool jobs_own = i >= context_.service_sinks.size();
    std::shared_ptr<Sink> sink =
        jobs_own ? make_sink(config.sinks[i], *context_.out) : context_.service_sinks[i];
    if (jobs_own && sink->delivers_later() && own_delivering_later) {
      own_delivering_later->push_back(sink);
    }
    // A peer that is down must not hold the job's end: its queue goes on delivering, the
    // service's for as long as the service runs, the job's own in context_.lingering.
    sinks.push_back(std::make_unique<CountedSink>(std::move(sink), *context_.metrics,
                                                  /*job_waits_for_delivery=*/false));
  }
  // Sharing a Redis, every instance shows the job's events: the owner logs them there too.
  if (publisher_) {
    sinks.push_back(
        std::make_unique<EventLogSink>(publisher_, context_.registry->events_per_job()));
  }
  auto registry = std::make_unique<RegistrySink>(job_.id, *context_.registry, *context_.metrics);
  if (registry_sink) *registry_sink = registry.get();
  sinks.push_back(std::move(registry));
  return sinks;
}

void JobRunner::run() {
  JobRegistry& registry = *context_.registry;
  std::string failure;
  try {
    const auto config = job_pipeline_config(job_, context_);
    check_configuration(*config);
    registry.start(job_.id, config);
    std::vector<std::shared_ptr<Sink>> own_delivering_later;
    {  // the job is let go of before the registry hears how it ended
      RegistrySink* registry_sink = nullptr;
      const std::unique_ptr<Job> job =
          open_job(*config, job_sinks(*config, &registry_sink, &own_delivering_later), job_.format);
      // Where the job knows when each step arrived, its events' latency is measured from it.
      if (const std::optional<Trial> trial = job->trial()) {
        registry_sink->time_events_from(*trial);
      }
      const Published published(*this, *job);
      const JobOutcome report = job->run();
      std::lock_guard lock(mutex_);
      report_read(running_counts());  // the whole job's: its progress is complete once it ran
      failure = report.source_failure;
    }
    if (context_.lingering) {
      const std::optional<JobSnapshot> ended = registry.job(job_.id);
      for (auto& sink : own_delivering_later) {
        context_.lingering->keep(ended ? ended->trial : std::string(), std::move(sink));
      }
    }
    if (failure.empty()) {
      registry.finish(job_.id);
    } else {
      registry.fail(job_.id, "reading the job failed: " + failure);
    }
  } catch (const std::exception& error) {  // nothing may leave the thread: the job is in Error
    registry.fail(job_.id, error.what());
  }
  done_ = true;
  on_done_();
}

JobRunner::ReadCounts JobRunner::running_counts() const {
  ReadCounts counts;
  if (running_ == nullptr) return counts;
  const JobProgress& progress = running_->progress();
  counts.index_files = progress.index_files_seen;
  counts.steps = progress.steps_released;
  counts.tensors = progress.tensors_decoded;
  counts.values = progress.values;
  counts.bytes = progress.event_bytes;
  counts.last_step = progress.last_step;
  return counts;
}

void JobRunner::report_read(const ReadCounts& now) {
  // A logdir's bytes are its files' listed sizes: a file replaced by a shorter one must not
  // wrap the counter.
  const std::uint64_t bytes = now.bytes > reported_.bytes ? now.bytes - reported_.bytes : 0;
  context_.metrics->add_read(job_.format, now.steps - reported_.steps,
                             now.tensors - reported_.tensors, now.values - reported_.values, bytes);
  reported_ = now;
  context_.registry->set_last_step(job_.id, now.last_step);
}

void JobRunner::check(std::chrono::steady_clock::time_point now) {
  std::lock_guard lock(mutex_);
  if (running_ == nullptr) return;  // not started yet, or ending
  const ReadCounts counts = running_counts();
  const bool changed = counts != reported_;
  report_read(counts);
  if (changed) {
    last_change_ = now;
  } else if (now - last_change_ >= context_.idle_timeout && !stop_requested_) {
    stop_requested_ = true;
    stop_pipeline();
  }
}

void JobRunner::request_stop() {
  std::lock_guard lock(mutex_);
  stop_requested_ = true;
  stop_pipeline();
}

void JobRunner::stop_pipeline() {
  if (running_ != nullptr) running_->request_stop();
}

}  // namespace rulestream
