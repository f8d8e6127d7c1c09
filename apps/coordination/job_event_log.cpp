#include "apps/coordination/job_event_log.hpp"

#include <algorithm>
#include <charconv>

namespace rulestream {
namespace {

// KEYS: fence, logged ids, events, total. ARGV: token, keep, then an event id and its payload
// for each event. How many were new, or -1 when fenced.
constexpr std::string_view kAppend = R"lua(
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return -1
end
local appended = 0
for i = 3, #ARGV, 2 do
  if redis.call('SADD', KEYS[2], ARGV[i]) == 1 then
    redis.call('RPUSH', KEYS[3], ARGV[i + 1])
    appended = appended + 1
  end
end
if appended > 0 then
  redis.call('LTRIM', KEYS[3], -tonumber(ARGV[2]), -1)
  redis.call('INCRBY', KEYS[4], appended)
end
return appended
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
  const auto appended = append_all(lease, {{event_id, payload}}, keep);
  if (!appended) return Outcome::Fenced;
  return *appended == 0 ? Outcome::AlreadyAppended : Outcome::Appended;
}

std::optional<std::size_t> JobEventLog::append_all(const JobLease& lease,
                                                   const std::vector<Entry>& entries,
                                                   std::size_t keep) {
  if (entries.empty()) return 0;
  std::vector<std::string> args{std::to_string(lease.token),
                                std::to_string(std::max<std::size_t>(keep, 1))};
  args.reserve(2 + 2 * entries.size());
  for (const Entry& entry : entries) {
    args.push_back(entry.event_id);
    args.push_back(entry.payload);
  }
  const std::int64_t outcome =
      redis_
          .eval(
              "append-job-events", kAppend,
              {job_key(prefix_, lease.job, "fence"), job_key(prefix_, lease.job, "logged"),
               job_key(prefix_, lease.job, "events"), job_key(prefix_, lease.job, "logged_total")},
              args)
          .as_integer();
  if (outcome < 0) return std::nullopt;
  return static_cast<std::size_t>(outcome);
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
