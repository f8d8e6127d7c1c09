#include "pipeline/coordination/job_event_log.hpp"

#include <algorithm>
#include <charconv>

namespace rulestream {
namespace {

// KEYS: fence, logged ids, events, total. ARGV: token, event id, payload, keep.
// 1 appended, 0 already appended, -1 fenced.
constexpr std::string_view kAppend = R"lua(
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return -1
end
if redis.call('SADD', KEYS[2], ARGV[2]) == 0 then
  return 0
end
redis.call('RPUSH', KEYS[3], ARGV[3])
redis.call('LTRIM', KEYS[3], -tonumber(ARGV[4]), -1)
redis.call('INCR', KEYS[4])
return 1
)lua";

// KEYS: events, total. {the list, the total or nil}.
constexpr std::string_view kRead = R"lua(
return {redis.call('LRANGE', KEYS[1], 0, -1), redis.call('GET', KEYS[2])}
)lua";

}  // namespace

JobEventLog::JobEventLog(RedisConnection& redis, std::string prefix)
    : redis_(redis), prefix_(std::move(prefix)) {}

JobEventLog::Outcome JobEventLog::append(const JobLease& lease, const std::string& event_id,
                                         const std::string& payload, std::size_t keep) {
  const std::int64_t outcome =
      redis_
          .eval(
              "append-job-event", kAppend,
              {job_key(prefix_, lease.job, "fence"), job_key(prefix_, lease.job, "logged"),
               job_key(prefix_, lease.job, "events"), job_key(prefix_, lease.job, "logged_total")},
              {std::to_string(lease.token), event_id, payload,
               std::to_string(std::max<std::size_t>(keep, 1))})
          .as_integer();
  if (outcome < 0) return Outcome::Fenced;
  return outcome == 0 ? Outcome::AlreadyAppended : Outcome::Appended;
}

JobEventLog::Events JobEventLog::read(const std::string& job) {
  const RedisReply reply =
      redis_.eval("read-job-events", kRead,
                  {job_key(prefix_, job, "events"), job_key(prefix_, job, "logged_total")}, {});
  const auto& parts = reply.as_array();
  if (parts.size() != 2) {
    throw RedisError(reply.context + ": a job's events came back as " +
                     std::to_string(parts.size()) + " parts, not 2");
  }
  Events events;
  for (const RedisReply& payload : parts[0].as_array())
    events.payloads.push_back(payload.as_string());
  // Lua's false (a missing key) comes back as nil; the total is a string of digits.
  if (!parts[1].is_nil()) {
    const std::string& text = parts[1].as_string();
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), events.total);
    if (error != std::errc() || end != text.data() + text.size()) {
      throw RedisError(reply.context + ": a job's event count is not a number");
    }
  }
  events.total =
      std::max<std::int64_t>(events.total, static_cast<std::int64_t>(events.payloads.size()));
  return events;
}

}  // namespace rulestream
