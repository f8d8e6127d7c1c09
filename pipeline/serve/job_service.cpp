#include "pipeline/serve/job_service.hpp"

namespace rulestream {

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
  context_.service_sinks = std::move(service_sinks);
  context_.out = &out;
  context_.job_rules_file = std::move(options.job_rules_file);
  context_.idle_timeout = options.idle_timeout;
  // Tracked for the service's life, so that /metrics shows them from the start, and their
  // counts stay exact between jobs.
  for (const auto& sink : context_.service_sinks) metrics_.track_sink(*sink);
}

JobService::~JobService() {
  stop();
  for (const auto& sink : context_.service_sinks) metrics_.untrack_sink(*sink);
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
}

void JobService::supervise() {
  for (;;) {
    try {
      tick();
    } catch (const std::exception& error) {  // nothing may leave the thread; next tick retries
      log_(std::string("supervising the jobs failed: ") + error.what());
    }
    ready_ = true;
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, poll_interval_, [this] { return stopping_ || job_ended_; });
    job_ended_ = false;
    if (stopping_) break;
  }
  // Every running job drains and reports; the queued ones never started.
  for (auto& runner : running_) runner->request_stop();
  running_.clear();  // joins each
}

void JobService::tick() {
  std::vector<std::string> problems;
  for (FoundJob& job : discovery_.scan(problems)) {
    if (!registry_.add(job.id, job.path.string(), job.format)) continue;
    metrics_.add_jobs_found(1);
    log_("found job " + job.id + " (" + std::string(trial_format_name(job.format)) + ") at " +
         job.path.string());
    queued_.push_back(std::move(job));
  }
  for (const std::string& problem : problems) {
    if (said_.insert(problem).second) log_(problem);
  }
  running_.remove_if([](const std::unique_ptr<JobRunner>& runner) { return runner->done(); });
  while (running_.size() < max_running_ && !queued_.empty()) {
    running_.push_back(std::make_unique<JobRunner>(std::move(queued_.front()), context_, [this] {
      {
        std::lock_guard lock(mutex_);
        job_ended_ = true;
      }
      wake_.notify_all();
    }));
    queued_.pop_front();
  }
  const auto now = std::chrono::steady_clock::now();
  for (auto& runner : running_) runner->check(now);
}

}  // namespace rulestream
