#include "apps/coordination/lease_heartbeat.hpp"

#include <algorithm>
#include <vector>

namespace rulestream {
namespace {

// Three renewals per TTL: one may fail, or be late, and the lease still stands.
std::chrono::milliseconds beat_interval(std::chrono::milliseconds ttl) {
  return std::clamp<std::chrono::milliseconds>(ttl / 3, std::chrono::milliseconds(1),
                                               std::chrono::milliseconds(5000));
}

}  // namespace

LeaseHeartbeat::LeaseHeartbeat(RedisEndpoint endpoint, JobLeaseOptions options,
                               std::function<void(const JobLease&)> on_lost)
    // A renewal that takes longer than a beat is as good as failed: its timeout is a beat's,
    // so that a server that does not answer is noticed before the lease runs out.
    : redis_(std::move(endpoint), {std::chrono::milliseconds(2000), beat_interval(options.ttl)}),
      leases_(redis_, options),
      on_lost_(std::move(on_lost)),
      interval_(beat_interval(options.ttl)) {
  thread_ = std::thread([this] { run(); });
}

LeaseHeartbeat::~LeaseHeartbeat() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void LeaseHeartbeat::hold(const JobLease& lease) {
  std::lock_guard lock(mutex_);
  held_.insert_or_assign(lease.job, lease);
}

void LeaseHeartbeat::let_go(const std::string& job) {
  std::lock_guard lock(mutex_);
  held_.erase(job);
}

std::size_t LeaseHeartbeat::held() const {
  std::lock_guard lock(mutex_);
  return held_.size();
}

void LeaseHeartbeat::run() {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
    lock.unlock();
    beat();
    lock.lock();
  }
}

void LeaseHeartbeat::beat() {
  std::vector<JobLease> leases;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [job, lease] : held_) leases.push_back(lease);
  }
  std::vector<JobLease> lost;
  for (JobLease& lease : leases) {
    const auto sent = std::chrono::steady_clock::now();
    bool ours = true;
    try {
      ours = leases_.renew(lease);
      if (ours) lease.renewed = sent;
    } catch (const RedisError&) {
      // Unreachable for now: the lease still stands until its TTL runs out, which decides.
    }
    const bool lapsed = !ours || sent - lease.renewed >= leases_.options().ttl;
    std::lock_guard lock(mutex_);
    const auto found = held_.find(lease.job);
    // Let go of (or taken again with another token) meanwhile: not this beat's to change.
    if (found == held_.end() || found->second.value != lease.value) continue;
    if (lapsed) {
      held_.erase(found);
      lost.push_back(lease);
    } else {
      found->second.renewed = lease.renewed;
    }
  }
  for (const JobLease& lease : lost) on_lost_(lease);
}

}  // namespace rulestream
