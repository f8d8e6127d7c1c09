#pragma once

// Where every job of every instance stands, shared through Redis: one hash, PREFIX:jobs, job id
// to a document its owner writes (serve writes the job as /api/jobs shows it). An owner writes
// only under its fence, so a former owner that wakes after a takeover overwrites nothing.

#include <map>
#include <string>

#include "apps/coordination/job_leases.hpp"
#include "apps/coordination/redis_connection.hpp"

namespace rulestream {

// Not thread-safe (its connection is not): one per thread.
class JobStates {
 public:
  explicit JobStates(RedisConnection& redis, std::string prefix = "rulestream");

  // Writes the job's document if `lease`'s token is still current; false (nothing written)
  // when another instance has taken the job since.
  bool publish(const JobLease& lease, const std::string& document);
  // Every job's latest document, by id.
  std::map<std::string, std::string> all();

 private:
  RedisConnection& redis_;
  const std::string prefix_;
};

}  // namespace rulestream
