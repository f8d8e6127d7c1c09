#pragma once

// Jobs as /api/jobs answers them, and, when instances share a Redis, every instance's jobs in
// one view: a job this instance holds as its registry has it, any other as the document its
// owner last published (job_coordinator.hpp), a job nobody has taken yet as found (Queued).

#include <boost/json/object.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "apps/serve/job_coordinator.hpp"
#include "apps/serve/job_registry.hpp"

namespace rulestream {

// One job: id, path, format, state, error, last_step, found, ended, rules [{rule_configuration,
// rule, status, firings, incidents, open_incidents, last_finding, last_finding_step, message}],
// events_dropped; and "instance", the instance that runs or ran it, when `instance` is given.
boost::json::object job_json(const JobSnapshot& job, const std::string& instance = {});

// Every job, by id. `coordinator` null: the registry's jobs alone.
std::vector<boost::json::object> jobs_json(const JobRegistry& registry,
                                           const JobCoordinator* coordinator);
// One job of that view; nullopt for an id nobody knows.
std::optional<boost::json::object> job_json(const JobRegistry& registry,
                                            const JobCoordinator* coordinator,
                                            const std::string& id);
// The view's jobs counted by state (every state present, 0 for none).
std::map<JobState, std::size_t> count_by_state(const std::vector<boost::json::object>& jobs);

}  // namespace rulestream
