#include "apps/serve/job_conditions.hpp"

#include <algorithm>

#include "apps/serve/job_registry.hpp"

namespace rulestream {
namespace {

JobCondition following(const JobSnapshot& job) {
  switch (job.state) {
    case JobState::Running:
      return {"Following", true, "Running", "its files are read as they land", {}};
    case JobState::Queued:
      return {"Following", false, "Queued", "waiting for a free place (--max-running)", {}};
    case JobState::Finished:
      return {"Following", false, "Finished", "read to its end", {}};
    case JobState::Error:
      return {"Following", false, "Error", job.error, {}};
  }
  return {"Following", false, "Unknown", "", {}};
}

JobCondition issues_found(const JobSnapshot& job) {
  std::string fired;
  const RuleProgress* latest = nullptr;
  for (const RuleProgress& rule : job.rules) {
    if (rule.firings == 0) continue;
    fired += (fired.empty() ? "" : ", ") + rule.rule_configuration;
    if (!latest || rule.last_finding_step > latest->last_finding_step) latest = &rule;
  }
  if (!latest) return {"IssuesFound", false, "NoRuleFired", "no rule has fired", {}};
  return {"IssuesFound", true, "RuleFired", fired + " fired; latest: " + latest->last_finding, {}};
}

JobCondition rules_evaluating(const JobSnapshot& job) {
  for (const RuleProgress& rule : job.rules) {
    if (rule.status == RuleStatus::Error) {
      return {"RulesEvaluating",
              false,
              "RuleError",
              rule.rule_configuration + ": " + rule.status_message,
              {}};
    }
  }
  return {"RulesEvaluating", true, "NoRuleError", "no rule ended in Error", {}};
}

}  // namespace

void update_conditions(std::vector<JobCondition>& conditions, const JobSnapshot& job,
                       std::chrono::system_clock::time_point now) {
  for (JobCondition current : {following(job), issues_found(job), rules_evaluating(job)}) {
    const auto known = std::find_if(conditions.begin(), conditions.end(),
                                    [&](const JobCondition& c) { return c.type == current.type; });
    if (known == conditions.end()) {
      current.last_transition = now;
      conditions.push_back(std::move(current));
      continue;
    }
    current.last_transition = known->status == current.status ? known->last_transition : now;
    *known = std::move(current);
  }
}

}  // namespace rulestream
