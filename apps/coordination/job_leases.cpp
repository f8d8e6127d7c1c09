#include "apps/coordination/job_leases.hpp"

namespace rulestream {
namespace {

// KEYS: lease, fence, ended. ARGV: owner, TTL in ms. The token, or nil.
constexpr std::string_view kAcquire = R"lua(
if redis.call('EXISTS', KEYS[3]) == 1 or redis.call('EXISTS', KEYS[1]) == 1 then
  return false
end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. '#' .. token, 'PX', ARGV[2])
return token
)lua";

// KEYS: lease. ARGV: the lease's value, TTL in ms. 1 if extended, 0 if no longer ours.
constexpr std::string_view kRenew = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
)lua";

// KEYS: lease. ARGV: the lease's value.
constexpr std::string_view kRelease = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
)lua";

// KEYS: lease, fence, ended. ARGV: the lease's value, its token, the state. 0 if fenced.
constexpr std::string_view kEnd = R"lua(
if redis.call('GET', KEYS[2]) ~= ARGV[2] then
  return 0
end
redis.call('SET', KEYS[3], ARGV[3])
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
return 1
)lua";

}  // namespace

JobLeases::JobLeases(RedisConnection& redis, JobLeaseOptions options)
    : redis_(redis), options_(std::move(options)) {
  if (options_.owner.empty() || options_.owner.find('#') != std::string::npos) {
    throw std::invalid_argument("a lease owner must be a non-empty name without '#'");
  }
  if (options_.ttl < std::chrono::milliseconds(1)) {
    throw std::invalid_argument("a lease's time to live must be at least 1 ms");
  }
}

std::string job_key(std::string_view prefix, std::string_view job, std::string_view suffix) {
  std::string key(prefix);
  key.append(":job:").append(job).append(":").append(suffix);
  return key;
}

std::optional<JobLease> JobLeases::try_acquire(const std::string& job) {
  const auto sent = std::chrono::steady_clock::now();
  const RedisReply reply = redis_.eval("acquire-lease", kAcquire,
                                       {key(job, "lease"), key(job, "fence"), key(job, "ended")},
                                       {options_.owner, std::to_string(options_.ttl.count())});
  if (reply.is_nil()) return std::nullopt;
  JobLease lease;
  lease.job = job;
  lease.token = reply.as_integer();
  lease.value = options_.owner + "#" + std::to_string(lease.token);
  lease.renewed = sent;
  return lease;
}

bool JobLeases::renew(const JobLease& lease) {
  return redis_
             .eval("renew-lease", kRenew, {key(lease.job, "lease")},
                   {lease.value, std::to_string(options_.ttl.count())})
             .as_integer() == 1;
}

void JobLeases::release(const JobLease& lease) {
  redis_.eval("release-lease", kRelease, {key(lease.job, "lease")}, {lease.value});
}

bool JobLeases::end(const JobLease& lease, std::string_view state) {
  return redis_
             .eval("end-job", kEnd,
                   {key(lease.job, "lease"), key(lease.job, "fence"), key(lease.job, "ended")},
                   {lease.value, std::to_string(lease.token), std::string(state)})
             .as_integer() == 1;
}

std::optional<std::string> JobLeases::ended(const std::string& job) {
  const RedisReply reply = redis_.command({"GET", key(job, "ended")});
  if (reply.is_nil()) return std::nullopt;
  return reply.as_string();
}

}  // namespace rulestream
