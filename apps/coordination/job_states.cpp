#include "apps/coordination/job_states.hpp"

namespace rulestream {
namespace {

// KEYS: fence, the jobs' hash. ARGV: token, job, document. 1 written, 0 fenced.
constexpr std::string_view kPublish = R"lua(
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
return 1
)lua";

}  // namespace

JobStates::JobStates(RedisConnection& redis, std::string prefix)
    : redis_(redis), prefix_(std::move(prefix)) {}

bool JobStates::publish(const JobLease& lease, const std::string& document) {
  return redis_
             .eval("publish-job-state", kPublish,
                   {job_key(prefix_, lease.job, "fence"), prefix_ + ":jobs"},
                   {std::to_string(lease.token), lease.job, document})
             .as_integer() == 1;
}

std::map<std::string, std::string> JobStates::all() {
  const RedisReply reply = redis_.command({"HGETALL", prefix_ + ":jobs"});
  const auto& fields = reply.as_array();
  std::map<std::string, std::string> documents;
  for (std::size_t i = 0; i + 1 < fields.size(); i += 2) {
    documents.emplace(fields[i].as_string(), fields[i + 1].as_string());
  }
  return documents;
}

}  // namespace rulestream
