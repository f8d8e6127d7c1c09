#include "apps/serve/job_json.hpp"

#include <boost/json/parse.hpp>

#include "core/model/utc_time.hpp"

namespace rulestream {
namespace {

namespace json = boost::json;

// The job's entry from the view: nullopt when the view has none (`local` is the registry's).
std::optional<json::object> merged(const std::optional<JobSnapshot>& local,
                                   const JobCoordinator* coordinator,
                                   const std::map<std::string, std::string>& documents,
                                   const std::string& id) {
  const bool held_here = coordinator && coordinator->holds(id);
  if (coordinator && !held_here) {
    if (const auto document = documents.find(id); document != documents.end()) {
      boost::system::error_code error;
      json::value parsed = json::parse(document->second, error);
      if (!error && parsed.is_object()) return std::move(parsed.as_object());
    }
  }
  if (!local) return std::nullopt;
  // A job only found here (nobody has published it) names no instance.
  const bool ran_here = held_here || local->state != JobState::Queued;
  return job_json(*local, coordinator && ran_here ? coordinator->options().instance : "");
}

}  // namespace

json::object job_json(const JobSnapshot& job, const std::string& instance) {
  json::object out;
  out["id"] = job.id;
  out["path"] = job.path;
  if (job.format) {
    out["format"] = trial_format_name(*job.format);
  } else {
    out["format"] = nullptr;  // its storage refused to be looked at
  }
  out["state"] = job_state_name(job.state);
  if (!job.error.empty()) out["error"] = job.error;
  if (job.last_step >= 0) {
    out["last_step"] = job.last_step;
  } else {
    out["last_step"] = nullptr;
  }
  out["found"] = iso8601_utc_seconds(job.found);
  if (job.ended) out["ended"] = iso8601_utc_seconds(*job.ended);
  json::array rules;
  for (const RuleProgress& rule : job.rules) {
    json::object entry;
    entry["rule_configuration"] = rule.rule_configuration;
    entry["rule"] = rule.rule;
    entry["status"] = rule.status ? rule_status_name(*rule.status) : "InProgress";
    entry["firings"] = rule.firings;
    entry["incidents"] = rule.incidents;
    entry["open_incidents"] = rule.open_incidents;
    if (rule.last_finding_step) {
      entry["last_finding"] = rule.last_finding;
      entry["last_finding_step"] = *rule.last_finding_step;
    }
    if (!rule.status_message.empty()) entry["message"] = rule.status_message;
    rules.push_back(std::move(entry));
  }
  out["rules"] = std::move(rules);
  json::array conditions;
  for (const JobCondition& condition : job.conditions) {
    conditions.push_back(
        json::object{{"type", condition.type},
                     {"status", condition.status ? "True" : "False"},
                     {"reason", condition.reason},
                     {"message", condition.message},
                     {"last_transition", iso8601_utc_seconds(condition.last_transition)}});
  }
  out["conditions"] = std::move(conditions);
  out["events_dropped"] = job.events_dropped;
  if (!instance.empty()) out["instance"] = instance;
  return out;
}

std::vector<json::object> jobs_json(const JobRegistry& registry,
                                    const JobCoordinator* coordinator) {
  std::map<std::string, std::optional<JobSnapshot>> ids;
  for (JobSnapshot& job : registry.jobs()) ids.emplace(job.id, std::move(job));
  const std::map<std::string, std::string> documents =
      coordinator ? coordinator->documents() : std::map<std::string, std::string>{};
  for (const auto& [id, document] : documents) ids.try_emplace(id);  // found elsewhere only
  std::vector<json::object> jobs;
  for (const auto& [id, local] : ids) {
    if (auto job = merged(local, coordinator, documents, id)) jobs.push_back(std::move(*job));
  }
  return jobs;
}

std::optional<json::object> job_json(const JobRegistry& registry, const JobCoordinator* coordinator,
                                     const std::string& id) {
  const std::map<std::string, std::string> documents =
      coordinator ? coordinator->documents() : std::map<std::string, std::string>{};
  return merged(registry.job(id), coordinator, documents, id);
}

std::map<JobState, std::size_t> count_by_state(const std::vector<json::object>& jobs) {
  std::map<JobState, std::size_t> counts;
  for (const JobState state : kAllJobStates) counts[state] = 0;
  for (const json::object& job : jobs) {
    const json::value* state = job.if_contains("state");
    for (const JobState known : kAllJobStates) {
      if (state && state->is_string() && state->get_string() == job_state_name(known)) {
        ++counts[known];
      }
    }
  }
  return counts;
}

}  // namespace rulestream
