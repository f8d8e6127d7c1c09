#include "apps/serve/job_coordinator.hpp"

#include <unistd.h>

#include <cstdio>
#include <random>
#include <utility>

namespace rulestream {
namespace {

JobLeaseOptions lease_options(const CoordinatorOptions& options) {
  return {options.instance, options.lease_ttl, options.prefix};
}

}  // namespace

std::string default_instance_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::random_device entropy;
  const unsigned suffix = entropy() & 0xffffffu;
  char text[16];
  std::snprintf(text, sizeof text, "%06x", suffix);
  std::string name = std::string(host) + ":" + std::to_string(::getpid()) + ":" + text;
  for (char& c : name) {
    if (c == '#') c = '_';  // '#' separates owner and token in a lease's value
  }
  return name;
}

JobCoordinator::JobCoordinator(CoordinatorOptions options)
    : options_(std::move(options)),
      redis_(options_.endpoint),
      leases_(redis_, lease_options(options_)),
      states_(redis_, options_.prefix),
      heartbeat_(options_.endpoint, lease_options(options_), [this](const JobLease& lease) {
        std::lock_guard lock(mutex_);
        held_.erase(lease.job);
        lost_.insert(lease.job);
      }) {}

namespace {

// Sets the instances' configuration unless another is held; renews it; answers the other's
// summary when another is held.
constexpr std::string_view kShareConfiguration = R"lua(
local held = redis.call('HGET', KEYS[1], 'digest')
if held and held ~= ARGV[1] then return redis.call('HGET', KEYS[1], 'summary') end
redis.call('HSET', KEYS[1], 'digest', ARGV[1], 'summary', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return false
)lua";

}  // namespace

std::optional<std::string> JobCoordinator::share_configuration(const std::string& digest,
                                                               const std::string& summary) {
  const RedisReply reply =
      redis_.eval("share-configuration", kShareConfiguration, {options_.prefix + ":configuration"},
                  {digest, summary, std::to_string(3 * options_.lease_ttl.count())});
  if (reply.is_nil()) return std::nullopt;
  return reply.as_string();
}

std::optional<JobLease> JobCoordinator::try_acquire(const std::string& job) {
  std::optional<JobLease> lease = leases_.try_acquire(job);
  if (lease) {
    heartbeat_.hold(*lease);
    std::lock_guard lock(mutex_);
    held_.insert(job);
    lost_.erase(job);
  }
  return lease;
}

std::optional<std::string> JobCoordinator::ended(const std::string& job) {
  return leases_.ended(job);
}

bool JobCoordinator::publish(const JobLease& lease, const std::string& document) {
  if (!states_.publish(lease, document)) return false;
  // What was published is the job's document from now on, also here: once the job is not held
  // here, documents() shows it, and the last one read back from Redis may be older.
  std::lock_guard lock(mutex_);
  documents_[lease.job] = document;
  return true;
}

void JobCoordinator::finish(const JobLease& lease, const std::string& state,
                            const std::string& document) {
  const bool published = publish(lease, document);
  if (published) leases_.end(lease, state);
  heartbeat_.let_go(lease.job);
  // Its last document is in documents() (publish, above) before the job stops being held here.
  // The other way round, /api/jobs and /metrics showed the document read back before it, a
  // Finished job as Running until the next refresh (serve_failover_test saw it under ASan).
  std::lock_guard lock(mutex_);
  held_.erase(lease.job);
}

void JobCoordinator::hand_over(const JobLease& lease) {
  heartbeat_.let_go(lease.job);
  {
    std::lock_guard lock(mutex_);
    held_.erase(lease.job);
  }
  leases_.release(lease);
}

std::set<std::string> JobCoordinator::take_lost() {
  std::lock_guard lock(mutex_);
  return std::exchange(lost_, {});
}

void JobCoordinator::refresh_documents() {
  std::map<std::string, std::string> documents = states_.all();
  std::lock_guard lock(mutex_);
  documents_ = std::move(documents);
}

JobEventLog::Events JobCoordinator::events(const std::string& job) const {
  std::lock_guard lock(readers_mutex_);
  if (!readers_redis_) readers_redis_.emplace(options_.endpoint);
  return JobEventLog(*readers_redis_, options_.prefix).read(job);
}

std::map<std::string, std::string> JobCoordinator::documents() const {
  std::lock_guard lock(mutex_);
  return documents_;
}

bool JobCoordinator::holds(const std::string& job) const {
  std::lock_guard lock(mutex_);
  return held_.count(job) != 0;
}

}  // namespace rulestream
