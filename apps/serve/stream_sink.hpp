#pragma once

// A job's events for the service's sinks when instances share a Redis: instead of writing to
// the sinks, the owner publishes each event into the stream (apps/coordination/
// event_stream.hpp) under its lease's fence, with an id that a replay of the job gives the same
// event again, and whichever instance reads it delivers it (event_delivery.hpp).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "apps/coordination/event_stream.hpp"
#include "apps/coordination/job_event_log.hpp"
#include "apps/coordination/job_leases.hpp"
#include "apps/coordination/redis_connection.hpp"
#include "apps/serve/service_metrics.hpp"
#include "sinks/sink.hpp"

namespace rulestream {

// The stable id of a rule event of `job`: "JOB/CONFIGURATION/STEP/N" for the Nth condition met
// (from 0) of the rule configuration at that step (a rule may fire twice at a step, for two
// series), "JOB/CONFIGURATION/status" for its status. Rules see steps in order and decide the
// same way each time, so a replay of the job gives each event the same id.
std::string rule_event_id(const std::string& job, const RuleEvent& event, std::int64_t occurrence);

// One job's publishing, shared by its StreamSinks (one per service sink). Thread-safe: rule
// nodes publish in parallel (one connection, under a mutex: publishing is a round trip to
// Redis, far below what the rules cost); silence() from the supervisor's thread.
class JobEventPublisher {
 public:
  // Connects on the first event (a job whose rules never fire costs no connection). A
  // publication that cannot reach Redis is retried for `retry_for` (the lease's TTL: past it,
  // the lease is lost and a takeover's replay publishes the event). `job_place`: where the job
  // is (its folder or S3 prefix), for the deliverer to find the sinks of its own rules file.
  JobEventPublisher(RedisEndpoint endpoint, JobLease lease, std::chrono::milliseconds retry_for,
                    std::string prefix, std::string job_place = {});

  enum class Outcome {
    Published,    // or already published (by a former owner, whose replay this is)
    NotTheOwner,  // silenced, or fenced: the job was taken over; the event is not this one's
    Unreachable,  // Redis could not be reached for `retry_for`: the event is not published
  };
  // The event for the job's sink `sink` (its index in the job's pipeline: the service's sinks,
  // then its own rules file's); `jobs_own` for one of the latter.
  Outcome publish(std::size_t sink, const RuleEvent& event, bool jobs_own = false);
  // The event into the job's event log, which keeps the newest `keep` (what /api/jobs/ID/events
  // shows on every instance: apps/coordination/job_event_log.hpp). Gathered, and appended
  // together (one round trip) when kLogBatch are waiting, when the oldest has waited kLogDelay
  // by the time another comes, and at flush_log(): the sink's flush at the end of the job's run
  // (before its end is published), and the supervisor's at every poll, so an event waits at
  // most a poll interval. An event only gathered is Published.
  Outcome log(const RuleEvent& event, std::size_t keep);
  Outcome flush_log();
  // flush_log once, without retrying: for the supervisor, which must not wait out a Redis that
  // cannot be reached. Unreachable keeps the events for the next try.
  Outcome try_flush_log();
  static constexpr std::size_t kLogBatch = 256;
  static constexpr std::chrono::milliseconds kLogDelay{50};
  // From now on nothing is published: the job is handed over (the service stops, or the lease
  // was lost), so the events of its rules' drain are not the job's.
  void silence() { silenced_ = true; }
  // Whether the job is still this publisher's: not silenced, and its fencing token still the
  // job's (a round trip to Redis, retried as publishing is). For what the owner writes itself
  // (OwnerWrittenSink).
  bool still_owner();

 private:
  // The id of the event as sent to `route` (a sink's index, or kLogRoute), counting the
  // conditions met per route, rule configuration and step (under mutex_).
  std::string event_id(std::size_t route, const RuleEvent& event);
  // Runs `attempt` (one round trip, true when the job is still ours) until it answers, retrying
  // an unreachable Redis for `retry_for` (under mutex_).
  template <typename Attempt>
  Outcome send(const Attempt& attempt, std::chrono::milliseconds retry_for);
  // Appends the gathered events, retrying for `retry_for` (under mutex_). They are let go
  // unless Redis could not be reached in a shorter time than the lease's TTL.
  Outcome append_gathered(std::chrono::milliseconds retry_for);
  static constexpr std::size_t kLogRoute = static_cast<std::size_t>(-2);

  const RedisEndpoint endpoint_;
  const JobLease lease_;
  const std::chrono::milliseconds retry_for_;
  const std::string prefix_;
  const std::string job_place_;
  std::atomic<bool> silenced_{false};

  std::mutex mutex_;  // guards what follows
  std::optional<RedisConnection> redis_;
  std::optional<EventPublisher> publisher_;
  std::optional<JobEventLog> log_;
  bool fenced_ = false;
  // The events gathered for the log, the newest `keep` it asked for, and when the oldest came.
  std::vector<JobEventLog::Entry> gathered_;
  std::size_t gathered_keep_ = 1;
  std::chrono::steady_clock::time_point oldest_gathered_;
  // Conditions met so far per (route, rule configuration, step): the N of the id.
  std::map<std::tuple<std::size_t, std::string, std::int64_t>, std::int64_t> occurrences_;
};

// A job's events into its event log in Redis (JobEventPublisher::log), for /api/jobs/ID/events on
// every instance. Beside the registry's sink: it gets every event the registry gets.
class EventLogSink final : public Sink {
 public:
  EventLogSink(std::shared_ptr<JobEventPublisher> publisher, std::size_t keep)
      : publisher_(std::move(publisher)), keep_(keep) {}
  std::string describe() const override { return "the job's event log in Redis"; }
  void write(const RuleEvent& event) override { publisher_->log(event, keep_); }
  void flush() override { publisher_->flush_log(); }

 private:
  std::shared_ptr<JobEventPublisher> publisher_;
  const std::size_t keep_;
};

// A sink the job's owner writes itself rather than through the stream, while the job is still
// its own (JobEventPublisher::still_owner before every event): an Alertmanager sink. Its alerts
// are state that the sink keeps and resends until the rule's status resolves them; delivered
// from the stream, a firing reached one instance and the status another, and the first
// instance's sink went on resending, firing again the alert the second had resolved. Written
// by the owner, each job's alerts live in one sink, made for the job (JobRunner::job_sinks),
// which stops resending when the job ends or is handed over. A takeover's replay sends the
// alerts again, which Alertmanager takes as the same alerts (one alert per label set).
// Thread-safe as the sink is.
class OwnerWrittenSink final : public Sink {
 public:
  OwnerWrittenSink(std::unique_ptr<Sink> sink, std::shared_ptr<JobEventPublisher> publisher)
      : sink_(std::move(sink)), publisher_(std::move(publisher)) {}
  std::string describe() const override { return sink_->describe(); }
  void write(const RuleEvent& event) override {
    if (publisher_->still_owner()) sink_->write(event);
  }
  void flush() override { sink_->flush(); }
  std::optional<SinkDeliveryCounts> delivery() const override { return sink_->delivery(); }

 private:
  std::unique_ptr<Sink> sink_;
  std::shared_ptr<JobEventPublisher> publisher_;
};

// Sink `index` of a job's pipeline, through the stream: one of the service's, or (`jobs_own`)
// one of the job's own rules file's, which the delivering instance makes from that file
// (job_own_sinks.hpp), so that a takeover's replay does not write it again. Counted in the
// metrics as a failure of that sink when its event could not be published.
class StreamSink final : public Sink {
 public:
  StreamSink(std::shared_ptr<JobEventPublisher> publisher, std::size_t index, std::string name,
             ServiceMetrics& metrics, bool jobs_own = false);
  std::string describe() const override { return name_; }
  void write(const RuleEvent& event) override;
  // Delivery is the deliverer's: nothing of this job's waits here.
  void flush() override {}

 private:
  std::shared_ptr<JobEventPublisher> publisher_;
  const std::size_t index_;
  const std::string name_;
  ServiceMetrics& metrics_;
  const bool jobs_own_;
};

}  // namespace rulestream
