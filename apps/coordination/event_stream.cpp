#include "apps/coordination/event_stream.hpp"

#include <charconv>

namespace rulestream {
namespace {

constexpr std::string_view kGroup = "sinks";

// KEYS: fence, published ids, stream. ARGV: token, event id, sink, payload, job place (empty
// for a service sink). 1 published, 0 already published, -1 fenced.
constexpr std::string_view kPublish = R"lua(
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return -1
end
if redis.call('SADD', KEYS[2], ARGV[3] .. ' ' .. ARGV[2]) == 0 then
  return 0
end
if ARGV[5] == '' then
  redis.call('XADD', KEYS[3], '*', 'id', ARGV[2], 'sink', ARGV[3], 'event', ARGV[4])
else
  redis.call('XADD', KEYS[3], '*', 'id', ARGV[2], 'sink', ARGV[3], 'event', ARGV[4],
             'job', ARGV[5])
end
return 1
)lua";

// KEYS: stream. ARGV: group, entry ids.
constexpr std::string_view kAcknowledge = R"lua(
redis.call('XACK', KEYS[1], ARGV[1], unpack(ARGV, 2))
return redis.call('XDEL', KEYS[1], unpack(ARGV, 2))
)lua";

// A foreign entry's sink that is not a number is no sink at all: the deliverer says so.
std::size_t sink_index(std::string_view text) {
  std::size_t index = kNoSink;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), index);
  return error == std::errc() && end == text.data() + text.size() ? index : kNoSink;
}

// [id, [field, value, ...]] entries, as XREADGROUP and XAUTOCLAIM list them; a nil entry (one
// deleted meanwhile) is skipped.
std::vector<StreamEntry> entries_of(const RedisReply& list) {
  std::vector<StreamEntry> entries;
  for (const RedisReply& entry : list.as_array()) {
    if (entry.is_nil() || entry.as_array().size() != 2 || entry.as_array()[1].is_nil()) continue;
    StreamEntry out;
    out.entry_id = entry.as_array()[0].as_string();
    const auto& fields = entry.as_array()[1].as_array();
    for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
      if (fields[i].as_string() == "id") out.event_id = fields[i + 1].as_string();
      if (fields[i].as_string() == "sink") out.sink = sink_index(fields[i + 1].as_string());
      if (fields[i].as_string() == "event") out.payload = fields[i + 1].as_string();
      if (fields[i].as_string() == "job") out.job_place = fields[i + 1].as_string();
    }
    entries.push_back(std::move(out));
  }
  return entries;
}

}  // namespace

EventPublisher::EventPublisher(RedisConnection& redis, std::string prefix)
    : redis_(redis), prefix_(std::move(prefix)) {}

EventPublisher::Outcome EventPublisher::publish(const JobLease& lease, const std::string& event_id,
                                                std::size_t sink, const std::string& payload,
                                                const std::string& job_place) {
  const std::int64_t outcome =
      redis_
          .eval("publish-event", kPublish,
                {job_key(prefix_, lease.job, "fence"), job_key(prefix_, lease.job, "published"),
                 prefix_ + ":events"},
                {std::to_string(lease.token), event_id, std::to_string(sink), payload, job_place})
          .as_integer();
  if (outcome < 0) return Outcome::Fenced;
  return outcome == 0 ? Outcome::AlreadyPublished : Outcome::Published;
}

EventConsumer::EventConsumer(RedisConnection& redis, std::string consumer, std::string prefix)
    : redis_(redis), consumer_(std::move(consumer)), stream_(std::move(prefix) + ":events") {}

void EventConsumer::ensure_group() {
  try {
    redis_.command({"XGROUP", "CREATE", stream_, kGroup, "0", "MKSTREAM"});
  } catch (const RedisError& error) {
    // Another instance made it first: what is wanted.
    if (std::string_view(error.what()).find("BUSYGROUP") == std::string_view::npos) throw;
  }
}

std::vector<StreamEntry> EventConsumer::read(std::size_t count, std::chrono::milliseconds block) {
  const RedisReply reply = redis_.command(
      {"XREADGROUP", "GROUP", kGroup, consumer_, "COUNT", std::to_string(count), "BLOCK",
       std::to_string(std::max<std::int64_t>(1, block.count())), "STREAMS", stream_, ">"});
  if (reply.is_nil()) return {};  // nothing new within `block`
  std::vector<StreamEntry> entries;
  for (const RedisReply& stream : reply.as_array()) {
    for (StreamEntry& entry : entries_of(stream.as_array().at(1))) {
      entries.push_back(std::move(entry));
    }
  }
  return entries;
}

std::vector<StreamEntry> EventConsumer::claim_stale(std::chrono::milliseconds min_idle,
                                                    std::size_t count) {
  const RedisReply reply =
      redis_.command({"XAUTOCLAIM", stream_, kGroup, consumer_, std::to_string(min_idle.count()),
                      "0-0", "COUNT", std::to_string(count)});
  return entries_of(reply.as_array().at(1));
}

void EventConsumer::acknowledge(const std::vector<std::string>& entry_ids) {
  if (entry_ids.empty()) return;
  std::vector<std::string> args{std::string(kGroup)};
  args.insert(args.end(), entry_ids.begin(), entry_ids.end());
  redis_.eval("acknowledge-events", kAcknowledge, {stream_}, args);
}

}  // namespace rulestream
