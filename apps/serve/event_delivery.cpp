#include "apps/serve/event_delivery.hpp"

#include <set>

#include "apps/coordination/rule_event_codec.hpp"

namespace rulestream {
namespace {

constexpr std::chrono::milliseconds kReadBlock{1000};
constexpr std::size_t kBatch = 100;

// A blocking read must not time out on the socket first.
RedisConnectionOptions delivery_connection() {
  RedisConnectionOptions options;
  options.command_timeout = kReadBlock + std::chrono::milliseconds(2000);
  return options;
}

}  // namespace

EventDelivery::EventDelivery(const CoordinatorOptions& options,
                             std::vector<std::shared_ptr<Sink>> sinks,
                             std::unique_ptr<JobOwnSinks> own_sinks, ServiceMetrics& metrics,
                             std::function<void(const std::string&)> log)
    : claim_after_(options.lease_ttl),
      own_sinks_(std::move(own_sinks)),
      metrics_(metrics),
      log_(std::move(log)),
      redis_(options.endpoint, delivery_connection()),
      consumer_(redis_, options.instance, options.prefix) {
  for (auto& sink : sinks)
    sinks_.push_back(std::make_unique<CountedSink>(std::move(sink), metrics));
  consumer_.ensure_group();
  thread_ = std::thread([this] { run(); });
}

EventDelivery::~EventDelivery() {
  stopping_ = true;
  thread_.join();
}

void EventDelivery::run() {
  std::string said;  // the last failure logged: a Redis that stays away is said once
  while (!stopping_) {
    try {
      deliver(consumer_.claim_stale(claim_after_, kBatch));
      deliver(consumer_.read(kBatch, kReadBlock));
      // Each flushed as its last batch was delivered.
      if (own_sinks_) own_sinks_->let_go_of_idle();
      said.clear();
      set_problem("");
    } catch (const RedisError& error) {
      if (said != error.what()) log_(std::string("delivering rule events: ") + error.what());
      said = error.what();
      set_problem(error.what());
      // A Redis that restarted empty has no consumer group: reading would fail for ever and
      // every event published from now on would reach no sink. The group is made again, from
      // the stream's start (the entries published since the restart).
      if (std::string_view(error.what()).find("NOGROUP") != std::string_view::npos &&
          make_group_again()) {
        continue;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
}

bool EventDelivery::make_group_again() {
  try {
    consumer_.ensure_group();
  } catch (const RedisError& error) {
    log_(std::string("making the consumer group again failed: ") + error.what());
    return false;
  }
  log_(
      "the event stream's consumer group was gone (Redis restarted without its data?): made "
      "again; the events published since are delivered");
  return true;
}

void EventDelivery::set_problem(const std::string& problem) {
  const std::lock_guard lock(problem_mutex_);
  problem_ = problem;
}

std::string EventDelivery::problem() const {
  const std::lock_guard lock(problem_mutex_);
  return problem_;
}

Sink* EventDelivery::sink_of(const StreamEntry& entry) {
  if (entry.job_place.empty()) {
    if (entry.sink < sinks_.size()) return sinks_[entry.sink].get();
    // Another instance was given more sinks than this one: the instances must share theirs.
    log_("rule event " + entry.event_id + " is for service sink " + std::to_string(entry.sink) +
         ", which this instance does not have (give every instance the same --sink list)");
    return nullptr;
  }
  // A sink of the job's own rules file, counted after the service's sinks.
  if (entry.sink < sinks_.size() || !own_sinks_) {
    log_("rule event " + entry.event_id + " is for sink " + std::to_string(entry.sink) +
         " of the job at " + entry.job_place + ", which this instance cannot tell (give every " +
         "instance the same --sink list and --job-rules name)");
    return nullptr;
  }
  try {
    return &own_sinks_->sink(entry.job_place, entry.sink - sinks_.size());
  } catch (const std::exception& error) {
    log_("rule event " + entry.event_id + " was not delivered: " + error.what());
    metrics_.add_sink_failure("a sink of a job's own rules file");
    return nullptr;
  }
}

void EventDelivery::deliver(const std::vector<StreamEntry>& entries) {
  if (entries.empty()) return;
  std::set<Sink*> written;
  std::vector<std::string> done;
  for (const StreamEntry& entry : entries) {
    done.push_back(entry.entry_id);
    Sink* sink = sink_of(entry);
    if (sink == nullptr) continue;
    try {
      sink->write(decode_rule_event(entry.payload));
      written.insert(sink);
    } catch (const std::invalid_argument& error) {
      log_("rule event " + entry.event_id + " in the stream cannot be read: " + error.what());
    }
  }
  for (Sink* sink : written) sink->flush();
  consumer_.acknowledge(done);
}

}  // namespace rulestream
