#pragma once

// The service's side of scale-out on Redis (`serve --coordinator redis://...`): which jobs this
// instance holds, the heartbeat that keeps them, the leases it lost, and every instance's job
// documents (what /api/jobs shows for the jobs held elsewhere).

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "apps/coordination/job_event_log.hpp"
#include "apps/coordination/job_leases.hpp"
#include "apps/coordination/job_states.hpp"
#include "apps/coordination/lease_heartbeat.hpp"
#include "apps/coordination/redis_connection.hpp"
#include "apps/coordination/redis_endpoint.hpp"

namespace rulestream {

struct CoordinatorOptions {
  RedisEndpoint endpoint;
  std::chrono::milliseconds lease_ttl{15000};
  // This instance's name among the instances: unique (see default_instance_name()).
  std::string instance;
  std::string prefix = "rulestream";
};

// "HOST:PID:RANDOM": unique among the instances sharing a Redis, also after a restart that
// reuses a pid.
std::string default_instance_name();

// Thread-safe as stated per member: the supervisor's thread acquires, ends and hands over jobs
// and refreshes the documents (with its own connection); HTTP threads read documents(),
// holds() and leases_held(); the heartbeat's thread records lost leases.
class JobCoordinator {
 public:
  // Connects twice (the supervisor's connection, the heartbeat's): RedisError naming the server
  // when it cannot.
  explicit JobCoordinator(CoordinatorOptions options);

  // Supervisor only. The job's lease, held and renewed from now on; nullopt when another
  // instance holds it or it has ended.
  std::optional<JobLease> try_acquire(const std::string& job);
  // Supervisor only. The state the job ended in on any instance; nullopt while it has not.
  std::optional<std::string> ended(const std::string& job);
  // Supervisor only. The job's document, under the lease's fence (false: fenced); documents()
  // has it at once when it was published.
  bool publish(const JobLease& lease, const std::string& document);
  // Supervisor only. The job ended here: its last document and its end, both under the fence;
  // no longer renewed. documents() has that document by the time holds() says false.
  void finish(const JobLease& lease, const std::string& state, const std::string& document);
  // Supervisor only. The job is no longer this instance's (stopping, or the lease was lost):
  // no longer renewed, released if still ours so that another instance takes it at once.
  void hand_over(const JobLease& lease);
  // Supervisor only. The jobs whose leases were lost since the last call.
  std::set<std::string> take_lost();
  // Supervisor only. Reads every instance's job documents for documents().
  void refresh_documents();
  // Supervisor only. Holds (or renews) what the instances must agree on
  // (shared_configuration.hpp) for three lease TTLs: nullopt when it is this instance's, or the
  // summary of the other one the live instances run.
  std::optional<std::string> share_configuration(const std::string& digest,
                                                 const std::string& summary);

  // Any thread (a connection of its own for them, under a lock). The job's event log, as its
  // owners appended it (apps/coordination/job_event_log.hpp). RedisError when Redis cannot
  // be reached.
  JobEventLog::Events events(const std::string& job) const;

  // Any thread.
  std::map<std::string, std::string> documents() const;
  bool holds(const std::string& job) const;
  std::size_t leases_held() const { return heartbeat_.held(); }
  const CoordinatorOptions& options() const { return options_; }

 private:
  const CoordinatorOptions options_;
  RedisConnection redis_;  // the supervisor's
  JobLeases leases_;
  JobStates states_;

  mutable std::mutex readers_mutex_;  // guards the readers' connection, made when first asked
  mutable std::optional<RedisConnection> readers_redis_;

  mutable std::mutex mutex_;  // guards what follows
  std::set<std::string> lost_;
  std::set<std::string> held_;
  std::map<std::string, std::string> documents_;

  LeaseHeartbeat heartbeat_;  // last: its thread reports into lost_
};

}  // namespace rulestream
