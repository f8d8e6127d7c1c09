#include "apps/serve/stream_sink.hpp"

#include <thread>

#include "apps/coordination/rule_event_codec.hpp"

namespace rulestream {

std::string rule_event_id(const std::string& job, const RuleEvent& event, std::int64_t occurrence) {
  const std::string configuration =
      event.rule_configuration.empty() ? event.rule : event.rule_configuration;
  if (event.kind == RuleEvent::Kind::Status) return job + "/" + configuration + "/status";
  if (event.kind == RuleEvent::Kind::IncidentResolved && event.incident) {
    return job + "/" + configuration + "/resolved/" + event.incident->id;
  }
  return job + "/" + configuration + "/" + std::to_string(event.global_step) + "/" +
         std::to_string(occurrence);
}

JobEventPublisher::JobEventPublisher(RedisEndpoint endpoint, JobLease lease,
                                     std::chrono::milliseconds retry_for, std::string prefix,
                                     std::string job_place)
    : endpoint_(std::move(endpoint)),
      lease_(std::move(lease)),
      retry_for_(retry_for),
      prefix_(std::move(prefix)),
      job_place_(std::move(job_place)) {}

std::string JobEventPublisher::event_id(std::size_t route, const RuleEvent& event) {
  std::int64_t occurrence = 0;
  if (event.kind == RuleEvent::Kind::ConditionMet) {
    occurrence = occurrences_[{route, event.rule_configuration, event.global_step}]++;
  }
  return rule_event_id(lease_.job, event, occurrence);
}

template <typename Attempt>
JobEventPublisher::Outcome JobEventPublisher::send(const Attempt& attempt,
                                                   std::chrono::milliseconds retry_for) {
  const auto give_up = std::chrono::steady_clock::now() + retry_for;
  for (;;) {
    try {
      if (!redis_) {
        redis_.emplace(endpoint_);
        publisher_.emplace(*redis_, prefix_);
        log_.emplace(*redis_, prefix_);
      }
      fenced_ = !attempt();
      return fenced_ ? Outcome::NotTheOwner : Outcome::Published;
    } catch (const RedisError&) {
      // Unreachable for now (the connection reconnects on the next try). Past the TTL the lease
      // has lapsed: another instance replays the job and publishes this event.
      if (silenced_) return Outcome::NotTheOwner;
      if (std::chrono::steady_clock::now() >= give_up) return Outcome::Unreachable;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

JobEventPublisher::Outcome JobEventPublisher::publish(std::size_t sink, const RuleEvent& event,
                                                      bool jobs_own) {
  if (silenced_) return Outcome::NotTheOwner;
  std::lock_guard lock(mutex_);
  if (fenced_) return Outcome::NotTheOwner;
  const std::string id = event_id(sink, event);
  const std::string payload = encode_rule_event(event);
  return send(
      [&] {
        return publisher_->publish(lease_, id, sink, payload,
                                   jobs_own ? job_place_ : std::string()) !=
               EventPublisher::Outcome::Fenced;
      },
      retry_for_);
}

JobEventPublisher::Outcome JobEventPublisher::log(const RuleEvent& event, std::size_t keep) {
  if (silenced_) return Outcome::NotTheOwner;
  std::lock_guard lock(mutex_);
  if (fenced_) return Outcome::NotTheOwner;
  const auto now = std::chrono::steady_clock::now();
  if (gathered_.empty()) oldest_gathered_ = now;
  gathered_.push_back({event_id(kLogRoute, event), encode_rule_event(event)});
  gathered_keep_ = keep;
  if (gathered_.size() < kLogBatch && now - oldest_gathered_ < kLogDelay) {
    return Outcome::Published;
  }
  return append_gathered(retry_for_);
}

JobEventPublisher::Outcome JobEventPublisher::flush_log() {
  if (silenced_) return Outcome::NotTheOwner;
  std::lock_guard lock(mutex_);
  if (fenced_) return Outcome::NotTheOwner;
  return append_gathered(retry_for_);
}

JobEventPublisher::Outcome JobEventPublisher::try_flush_log() {
  if (silenced_) return Outcome::NotTheOwner;
  std::lock_guard lock(mutex_);
  if (fenced_) return Outcome::NotTheOwner;
  return append_gathered(std::chrono::milliseconds(0));
}

JobEventPublisher::Outcome JobEventPublisher::append_gathered(std::chrono::milliseconds retry_for) {
  if (gathered_.empty()) return Outcome::Published;
  const Outcome outcome = send(
      [&] { return log_->append_all(lease_, gathered_, gathered_keep_).has_value(); }, retry_for);
  // Fenced: not this owner's to append. Unreachable for the lease's TTL: the lease has lapsed,
  // and the next owner's replay appends them. Unreachable on a quicker try: kept for the next.
  if (outcome != Outcome::Unreachable || retry_for >= retry_for_) gathered_.clear();
  return outcome;
}

bool JobEventPublisher::still_owner() {
  if (silenced_) return false;
  std::lock_guard lock(mutex_);
  if (fenced_) return false;
  const std::string fence = job_key(prefix_, lease_.job, "fence");
  const std::string token = std::to_string(lease_.token);
  return send(
             [&] {
               const RedisReply current = redis_->command({"GET", fence});
               return !current.is_nil() && current.as_string() == token;
             },
             retry_for_) == Outcome::Published;
}

StreamSink::StreamSink(std::shared_ptr<JobEventPublisher> publisher, std::size_t index,
                       std::string name, ServiceMetrics& metrics, bool jobs_own)
    : publisher_(std::move(publisher)),
      index_(index),
      name_(std::move(name)),
      metrics_(metrics),
      jobs_own_(jobs_own) {}

void StreamSink::write(const RuleEvent& event) {
  if (publisher_->publish(index_, event, jobs_own_) == JobEventPublisher::Outcome::Unreachable) {
    metrics_.add_sink_failure(name_);
  }
}

}  // namespace rulestream
