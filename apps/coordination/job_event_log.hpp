#pragma once

// Every instance's view of a job's rule events (what /api/jobs/ID/events shows on any instance,
// not only the owner): the owner appends each event to PREFIX:job:ID:events, a list that keeps
// the newest `keep`, under its lease's fence (a former owner appends nothing) and once per
// stable id (PREFIX:job:ID:logged: a takeover's replay of the job appends nothing twice); any
// instance reads it. PREFIX:job:ID:logged_total counts every event appended, the forgotten
// ones too.
//
// Not for delivery: the sinks get their events through the stream (event_stream.hpp).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "apps/coordination/job_leases.hpp"
#include "apps/coordination/redis_connection.hpp"

namespace rulestream {

// Not thread-safe (its connection is not): one per thread, or under a lock.
class JobEventLog {
 public:
  explicit JobEventLog(RedisConnection& redis, std::string prefix = "rulestream");

  enum class Outcome { Appended, AlreadyAppended, Fenced };
  // `event_id` stable across replays of the job, `payload` the encoded event; the list keeps
  // the newest `keep` (at least 1).
  Outcome append(const JobLease& lease, const std::string& event_id, const std::string& payload,
                 std::size_t keep);
  // Several events in one round trip, in order, each as append() would: how many were new, or
  // nullopt when the lease is fenced (then none is appended). A job firing at every step
  // appended one event a round trip, and waking Redis for each was most of what the job cost
  // a `serve` instance.
  struct Entry {
    std::string event_id;
    std::string payload;
  };
  std::optional<std::size_t> append_all(const JobLease& lease, const std::vector<Entry>& entries,
                                        std::size_t keep);

  struct Events {
    std::vector<std::string> payloads;  // oldest first
    std::int64_t total = 0;             // appended ever: total - payloads.size() forgotten
  };
  // Read in one step (a script), so that the count and the list agree.
  Events read(const std::string& job);

 private:
  RedisConnection& redis_;
  const std::string prefix_;
};

}  // namespace rulestream
