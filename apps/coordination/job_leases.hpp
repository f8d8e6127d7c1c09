#pragma once

// Who runs each job when several `serve` instances share one Redis: exactly one owner per job
// through a lease key with a time to live, and a fencing token taken with each lease.
//
// Keys, under a prefix (default "rulestream"), per job id:
//   PREFIX:job:ID:lease   "OWNER#TOKEN" while an instance holds the job; expires after the TTL
//                         unless renewed
//   PREFIX:job:ID:fence   the job's fencing counter: INCR'd by every acquisition, so the latest
//                         holder's token is the counter's value
//   PREFIX:job:ID:ended   the state the job ended in ("Finished", "Error"): nobody takes it again
//
// Fencing: a holder's token stays current until another instance acquires the job (not merely
// until its lease expires: a lapsed lease that nobody took still names the latest work). Every
// write a holder makes for its job (ending it here; its events and state elsewhere) runs in a
// script that first compares its token with the counter, so a paused former owner that wakes
// after a takeover writes nothing.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "apps/coordination/redis_connection.hpp"

namespace rulestream {

// PREFIX:job:ID:SUFFIX, the key of one of a job's entries (lease, fence, ended, published).
std::string job_key(std::string_view prefix, std::string_view job, std::string_view suffix);

struct JobLease {
  std::string job;
  std::int64_t token = 0;  // the fencing token
  // The lease key's value, "OWNER#TOKEN": renewing and releasing check it is still this.
  std::string value;
  // When the acquisition or the latest successful renewal was sent: the lease lasts at least
  // until this plus the TTL, and at most that on the server's clock.
  std::chrono::steady_clock::time_point renewed;
};

struct JobLeaseOptions {
  std::string owner;  // this instance, unique among the instances (host, pid, a random part)
  std::chrono::milliseconds ttl{15000};
  std::string prefix = "rulestream";
};

// The lease scripts over one connection. Not thread-safe, as RedisConnection is not: one per
// thread (the supervisor's, the heartbeat's). Every member throws RedisError when the server
// cannot be reached or refuses; none retries.
class JobLeases {
 public:
  JobLeases(RedisConnection& redis, JobLeaseOptions options);

  // The job's lease with a new fencing token, or nullopt when another instance holds it or the
  // job has ended.
  std::optional<JobLease> try_acquire(const std::string& job);
  // Extends the lease by the TTL if it is still this one's; false when it lapsed or was taken.
  bool renew(const JobLease& lease);
  // Lets go of the lease if it is still this one's, so another instance may take the job at
  // once (a service stopping hands its jobs over).
  void release(const JobLease& lease);
  // Marks the job ended in `state` and releases its lease, if the lease's token is still
  // current; false (and nothing written) when another instance has taken the job since.
  bool end(const JobLease& lease, std::string_view state);
  // The state the job ended in, or nullopt while it has not ended.
  std::optional<std::string> ended(const std::string& job);

  const JobLeaseOptions& options() const { return options_; }

 private:
  std::string key(const std::string& job, std::string_view suffix) const {
    return job_key(options_.prefix, job, suffix);
  }

  RedisConnection& redis_;
  const JobLeaseOptions options_;
};

}  // namespace rulestream
