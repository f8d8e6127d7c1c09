#pragma once

// Where the sinks get their events when instances share a Redis: a thread that reads the event
// stream as this instance's consumer of the group, writes each event to the sink it is for (one
// of the service's, or one of its job's own rules file, made here: job_own_sinks.hpp), flushes
// them (a file synced, a webhook's queue delivered or dead-lettered), and only then
// acknowledges: at least once. Entries another instance read and never acknowledged (it died)
// are claimed once idle for a lease's TTL, and delivered here.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "apps/coordination/event_stream.hpp"
#include "apps/coordination/redis_connection.hpp"
#include "apps/serve/job_coordinator.hpp"
#include "apps/serve/job_own_sinks.hpp"
#include "apps/serve/job_sinks.hpp"
#include "apps/serve/service_metrics.hpp"

namespace rulestream {

// Thread-safe in that it is driven by its own thread only; the destructor stops and joins it
// (within about a second: a read blocks that long at most). `log` is called on its thread.
class EventDelivery {
 public:
  // Connects and makes the consumer group (RedisError naming the server if it cannot), then
  // starts the thread. `sinks` are the service's, in the order of their configuration;
  // `own_sinks` makes those of jobs' own rules files.
  EventDelivery(const CoordinatorOptions& options, std::vector<std::shared_ptr<Sink>> sinks,
                std::unique_ptr<JobOwnSinks> own_sinks, ServiceMetrics& metrics,
                std::function<void(const std::string&)> log);
  ~EventDelivery();
  EventDelivery(const EventDelivery&) = delete;
  EventDelivery& operator=(const EventDelivery&) = delete;

  // Why delivering failed at its latest try (Redis cannot be reached, refuses); empty while it
  // works. Thread-safe.
  std::string problem() const;

 private:
  void run();
  // After NOGROUP: the group made again; false (said) when that failed too.
  bool make_group_again();
  void set_problem(const std::string& problem);
  // Writes the entries to their sinks, flushes those it wrote to, acknowledges them all.
  void deliver(const std::vector<StreamEntry>& entries);
  // The sink an entry is for; nullptr (said in the log) when there is none to deliver it to.
  Sink* sink_of(const StreamEntry& entry);

  const std::chrono::milliseconds claim_after_;
  std::vector<std::unique_ptr<CountedSink>> sinks_;
  std::unique_ptr<JobOwnSinks> own_sinks_;
  ServiceMetrics& metrics_;
  std::function<void(const std::string&)> log_;
  RedisConnection redis_;  // the thread's alone
  EventConsumer consumer_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex problem_mutex_;
  std::string problem_;
  std::thread thread_;  // last: started once everything above is
};

}  // namespace rulestream
