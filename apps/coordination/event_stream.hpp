#pragma once

// Rule events through one Redis stream, PREFIX:events, from the instance that owns a job to
// whichever instance delivers them to the sinks.
//
// Publishing (the owner): a script checks the publisher's fencing token against the job's
// counter (a former owner publishes nothing) and adds the event's stable id to the job's set of
// published ids, PREFIX:job:ID:published; an id already there is dropped, so a takeover's
// replay of the job publishes nothing twice. Only then is the entry added: {id, sink, event},
// and `job` for a sink of the job's own. `sink` says which of the job's sinks the entry is
// for, counted as its pipeline counts them: first the service's (the instances are given the
// same sinks, in the same order), then those of the job's own rules file, found through
// `job` (where the job is) by whichever instance delivers it. An event routed to two sinks is
// two entries, each delivered once.
//
// Delivering (every instance): one consumer group, "sinks"; each instance is a consumer that
// reads new entries, writes them to its sinks and then acknowledges and deletes them (one
// group consumes the stream, so an acknowledged entry is needed by nobody: the stream holds only
// what is not yet delivered). Entries a consumer read and never acknowledged (it died) are
// claimed by another after they have been idle for a while: at least once, never lost.

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "apps/coordination/job_leases.hpp"
#include "apps/coordination/redis_connection.hpp"

namespace rulestream {

// The owner's side. Not thread-safe (its connection is not): one per job, or under a lock.
class EventPublisher {
 public:
  enum class Outcome { Published, AlreadyPublished, Fenced };

  EventPublisher(RedisConnection& redis, std::string prefix = "rulestream");
  // `event_id` stable across replays of the job, `sink` the job's sink it goes to, `payload`
  // the encoded event, `job_place` where the job is when the sink is one of its own rules
  // file's (empty for the service's). An (event_id, sink) pair is published once.
  Outcome publish(const JobLease& lease, const std::string& event_id, std::size_t sink,
                  const std::string& payload, const std::string& job_place = {});

 private:
  RedisConnection& redis_;
  const std::string prefix_;
};

// The sink of an entry whose sink field is missing or not a number.
inline constexpr std::size_t kNoSink = static_cast<std::size_t>(-1);

struct StreamEntry {
  std::string entry_id;        // the stream's id ("1700000000000-0"), to acknowledge
  std::string event_id;        // the event's stable id
  std::size_t sink = kNoSink;  // which of the job's sinks it is for
  std::string payload;
  std::string job_place;  // where the job is, for a sink of its own rules file; else empty
};

// A consumer of the group. Not thread-safe: one per delivering thread, with a connection whose
// command timeout is longer than the reads' blocking time.
class EventConsumer {
 public:
  EventConsumer(RedisConnection& redis, std::string consumer, std::string prefix = "rulestream");

  // Creates the group (and the stream) unless it exists. Every instance calls it at start; the
  // group starts at the stream's beginning, so nothing published before it is missed.
  void ensure_group();
  // New entries, at most `count`, waiting at most `block` for one; none after that.
  std::vector<StreamEntry> read(std::size_t count, std::chrono::milliseconds block);
  // Entries another consumer read and has not acknowledged for at least `min_idle`, now this
  // consumer's (at most `count` per call).
  std::vector<StreamEntry> claim_stale(std::chrono::milliseconds min_idle, std::size_t count);
  // Acknowledges the entries and deletes them from the stream.
  void acknowledge(const std::vector<std::string>& entry_ids);

  const std::string& stream() const { return stream_; }

 private:
  RedisConnection& redis_;
  const std::string consumer_;
  const std::string stream_;
};

}  // namespace rulestream
