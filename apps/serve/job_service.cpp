#include "apps/serve/job_service.hpp"

#include <boost/json/serialize.hpp>

#include "apps/serve/job_json.hpp"
#include "apps/serve/stream_sink.hpp"
#include "rules/rule_registry.hpp"

namespace rulestream {
namespace {

// How long the delivering instance keeps the sinks of a job's own rules file without an event
// for them. Long enough that a job's firings between two statuses reuse one sink (a webhook's
// queue, an Alertmanager sink's resending): alerts are re-sent on an interval of minutes.
constexpr std::chrono::minutes kJobOwnSinksIdle{15};

}  // namespace

JobService::JobService(JobServiceOptions options, std::vector<std::shared_ptr<Sink>> service_sinks,
                       std::ostream& out, std::function<void(const std::string&)> log)
    : poll_interval_(options.base.poll_interval),
      max_running_(std::max<std::size_t>(1, options.max_running)),
      log_(std::move(log)),
      registry_(options.history, options.events_per_job),
      discovery_(options.roots, options.base.storage) {
  context_.registry = &registry_;
  context_.metrics = &metrics_;
  context_.base = std::move(options.base);
  if (options.share_inotify) context_.base.inotify_hub = inotify_.hub();
  if (!inotify_.hub()) {
    log_(inotify_.problem() + "; each job will try an inotify instance of its own");
  }
  context_.service_sinks = std::move(service_sinks);
  context_.out = &out;
  context_.job_rules_file = std::move(options.job_rules_file);
  context_.idle_timeout = options.idle_timeout;
  context_.inotify_rescan_interval = options.inotify_rescan_interval;
  context_.lingering = std::make_shared<LingeringSinks>();
  context_.state_dir = std::move(options.state_dir);
  // Tracked for the service's life, so that /metrics shows them from the start, and their
  // counts stay exact between jobs.
  for (const auto& sink : context_.service_sinks) metrics_.track_sink(*sink);
  if (options.coordinator) {
    coordinator_ = std::make_unique<JobCoordinator>(*options.coordinator);
    // Instances sharing a Redis share the jobs: they must judge them alike.
    shared_ = shared_configuration(context_.base, context_.job_rules_file);
    if (const auto other = coordinator_->share_configuration(shared_.digest, shared_.summary)) {
      throw RuleConfigError(
          "the instances sharing " + options.coordinator->endpoint.describe() +
          " run other rules or sinks (" + *other + "; this one: " + shared_.summary +
          "): give every instance the same --rule/--rules, --sink kinds and --job-rules (what "
          "they share lapses three --lease-ttl after the last of them stops)");
    }
    delivery_ = std::make_unique<EventDelivery>(
        *options.coordinator, context_.service_sinks,
        std::make_unique<JobOwnSinks>(context_.job_rules_file, context_.base.storage, out, metrics_,
                                      kJobOwnSinksIdle, context_.state_dir),
        metrics_, log_);
  }
}

JobService::~JobService() {
  stop();
  for (const auto& sink : context_.service_sinks) metrics_.untrack_sink(*sink);
}

void JobService::set_supervising_problem(const std::string& problem) {
  const std::lock_guard lock(supervising_mutex_);
  supervising_problem_ = problem;
}

std::string JobService::unready_reason() const {
  if (!ready_) return "scanning the roots";
  {
    const std::lock_guard lock(supervising_mutex_);
    if (!supervising_problem_.empty()) return "the coordinator: " + supervising_problem_;
  }
  if (delivery_) {
    if (std::string problem = delivery_->problem(); !problem.empty()) {
      return "delivering rule events: " + problem;
    }
  }
  return "";
}

std::int64_t JobService::undelivered(std::string_view trial) const {
  if (trial.empty()) return 0;
  std::int64_t count = context_.lingering->undelivered(trial);
  for (const auto& sink : context_.service_sinks) count += sink->undelivered(trial);
  return count;
}

std::shared_ptr<const PipelineConfig> JobService::configuration_of(const JobSnapshot& job) const {
  if (job.config) return job.config;
  return job_pipeline_config(
      FoundJob{.id = job.id, .path = job.path, .format = job.format.value_or(TrialFormat::Smdebug)},
      context_);
}

void JobService::start() {
  if (supervisor_.joinable()) return;
  supervisor_ = std::thread([this] { supervise(); });
}

void JobService::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (supervisor_.joinable()) supervisor_.join();
  delivery_.reset();  // what it read is delivered and acknowledged
}

void JobService::supervise() {
  std::string said;  // the last failure logged: a coordinator that stays away is said once
  auto next_poll = std::chrono::steady_clock::now();
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    const bool poll = now >= next_poll;
    if (poll) next_poll = now + poll_interval_;  // before: a failing tick is retried a poll later
    try {
      poll ? tick() : settle_and_start();
      said.clear();
      if (poll) set_supervising_problem("");
    } catch (const std::exception& error) {  // nothing may leave the thread; next tick retries
      if (said != error.what()) log_(std::string("supervising the jobs failed: ") + error.what());
      said = error.what();
      if (coordinator_) set_supervising_problem(error.what());
    }
    ready_ = true;
    std::unique_lock lock(mutex_);
    wake_.wait_until(lock, next_poll, [this] { return stopping_ || job_ended_; });
    job_ended_ = false;
    if (stopping_) break;
  }
  // Every running job drains and reports; the queued ones never started. With a coordinator,
  // the running ones are handed over instead: another instance goes on with them.
  for (Running& running : running_) {
    if (running.lease && !running.runner->done()) hand_over(running);
    running.runner->request_stop();
  }
  for (Running& running : running_) {
    running.runner.reset();  // joins
    try {
      settle(running);
    } catch (const std::exception& error) {  // its lease lapses; another instance takes it
      log_(std::string("handing over the jobs failed: ") + error.what());
    }
  }
  running_.clear();
}

void JobService::tick() {
  std::vector<std::string> problems;
  for (FoundJob& job : discovery_.scan(problems)) {
    const bool refused = !job.refused.empty();  // its format is not known
    if (!registry_.add(job.id, job.path.string(),
                       refused ? std::nullopt : std::optional<TrialFormat>(job.format))) {
      continue;
    }
    metrics_.add_jobs_found(1);
    if (refused) {  // never runs: shown in Error with the reason
      log_("found job " + job.id + " at " + job.path.string() + ", which may not be read");
      registry_.fail(job.id, job.refused);
      continue;
    }
    log_("found job " + job.id + " (" + std::string(trial_format_name(job.format)) + ") at " +
         job.path.string());
    queued_.push_back(std::move(job));
  }
  for (const std::string& problem : problems) {
    if (said_.insert(problem).second) log_(problem);
  }
  settle_ended();
  start_jobs();
  const auto now = std::chrono::steady_clock::now();
  for (Running& running : running_) running.runner->check(now);
  if (coordinator_) coordinate();
}

void JobService::settle_and_start() {
  settle_ended();
  start_jobs();
}

void JobService::settle_ended() {
  for (auto running = running_.begin(); running != running_.end();) {
    if (!running->runner->done()) {
      ++running;
      continue;
    }
    settle(*running);  // a Redis that cannot be reached: kept, and settled next tick
    running = running_.erase(running);
  }
}

void JobService::start_jobs() {
  if (!coordinator_) {
    while (running_.size() < max_running_ && !queued_.empty()) {
      start_job(std::move(queued_.front()), std::nullopt);
      queued_.pop_front();
    }
    return;
  }
  // Each queued job once: taken if its lease is free, dropped if it ended (elsewhere), else
  // kept for a later tick (another instance runs it).
  for (std::size_t tries = queued_.size(); tries > 0 && running_.size() < max_running_; --tries) {
    const std::string& id = queued_.front().id;
    std::optional<JobLease> lease = coordinator_->try_acquire(id);
    const std::optional<std::string> ended = lease ? std::nullopt : coordinator_->ended(id);
    FoundJob job = std::move(queued_.front());
    queued_.pop_front();
    if (lease) {
      log_("job " + job.id + " is this instance's (fencing token " + std::to_string(lease->token) +
           ")");
      start_job(std::move(job), std::move(lease));
    } else if (ended) {
      // Shown as its owner published it; here it ends too, so that history bounds it.
      if (*ended == job_state_name(JobState::Error)) {
        registry_.fail(job.id, "ended in Error on another instance");
      } else {
        registry_.finish(job.id);
      }
    } else {
      queued_.push_back(std::move(job));
    }
  }
}

void JobService::start_job(FoundJob job, std::optional<JobLease> lease) {
  Running running;
  if (lease) {
    const CoordinatorOptions& options = coordinator_->options();
    running.publisher = std::make_shared<JobEventPublisher>(
        options.endpoint, *lease, options.lease_ttl, options.prefix, job.path.string());
  }
  running.lease = std::move(lease);
  running.runner = std::make_unique<JobRunner>(
      std::move(job), context_,
      [this] {
        {
          std::lock_guard lock(mutex_);
          job_ended_ = true;
        }
        wake_.notify_all();
      },
      running.publisher);
  running_.push_back(std::move(running));
}

void JobService::hand_over(Running& running) {
  if (running.handed_over) return;
  running.handed_over = true;
  running.publisher->silence();
  running.runner->request_stop();
}

void JobService::settle(Running& running) {
  if (!running.lease) return;
  const std::string& id = running.lease->job;
  if (running.handed_over) {
    coordinator_->hand_over(*running.lease);
    registry_.requeue(id);
    if (running.runner) queued_.push_back(running.runner->job());  // to take again if it lapses
    log_("job " + id + " handed over");
    return;
  }
  const auto job = registry_.job(id);
  const JobState state = job ? job->state : JobState::Error;
  coordinator_->finish(*running.lease, std::string(job_state_name(state)), document(id));
}

void JobService::coordinate() {
  // Renewed while this instance runs; another configuration can only be there if this one
  // lapsed (Redis restarted empty, or this instance paused past three lease TTLs).
  if (const auto other = coordinator_->share_configuration(shared_.digest, shared_.summary)) {
    throw RuleConfigError("another configuration now holds the coordinator (" + *other +
                          "): this instance's jobs may be judged by other rules elsewhere");
  }
  const std::set<std::string> lost = coordinator_->take_lost();
  for (Running& running : running_) {
    if (!running.lease || running.handed_over || running.runner->done()) continue;
    // Events the job's log gathered since the last poll (JobEventPublisher::log).
    if (running.publisher) running.publisher->try_flush_log();
    if (lost.count(running.lease->job) != 0) {
      log_("job " + running.lease->job + ": its lease was lost; handing it over");
      hand_over(running);
    } else if (!coordinator_->publish(*running.lease, document(running.lease->job))) {
      log_("job " + running.lease->job + " was taken over by another instance");
      hand_over(running);
    }
  }
  coordinator_->refresh_documents();
}

std::string JobService::document(const std::string& id) const {
  const auto job = registry_.job(id);
  if (!job) return "{}";
  return boost::json::serialize(job_json(*job, coordinator_->options().instance));
}

}  // namespace rulestream
