#pragma once

// Keeps alive the leases one instance holds: a thread with a connection of its own renews each
// every third of the TTL, so that a slow scan or a busy supervisor never lets one lapse.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "apps/coordination/job_leases.hpp"
#include "apps/coordination/redis_endpoint.hpp"

namespace rulestream {

// Thread-safe: hold(), let_go() and held() from any thread. `on_lost` is called on the
// heartbeat's thread, with no lock held, for a lease that is lost: no longer this instance's
// when renewed (it lapsed and was taken, or deleted), or not renewed for a whole TTL (Redis
// unreachable: by then it has expired there). A lost lease is no longer held. The destructor
// stops the thread (the leases are left to expire; JobLeases::release hands one over at once).
class LeaseHeartbeat {
 public:
  // Connects now (RedisError if it cannot) and starts the thread.
  LeaseHeartbeat(RedisEndpoint endpoint, JobLeaseOptions options,
                 std::function<void(const JobLease&)> on_lost);
  ~LeaseHeartbeat();
  LeaseHeartbeat(const LeaseHeartbeat&) = delete;
  LeaseHeartbeat& operator=(const LeaseHeartbeat&) = delete;

  void hold(const JobLease& lease);
  // Stops renewing the job's lease (it ended, or was released).
  void let_go(const std::string& job);
  std::size_t held() const;

 private:
  void run();
  void beat();

  RedisConnection redis_;  // the thread's alone
  JobLeases leases_;
  const std::function<void(const JobLease&)> on_lost_;
  const std::chrono::milliseconds interval_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::string, JobLease> held_;  // by job
  bool stopping_ = false;
  std::thread thread_;  // last: started once everything above is
};

}  // namespace rulestream
