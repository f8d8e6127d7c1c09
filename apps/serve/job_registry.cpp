#include "apps/serve/job_registry.hpp"

#include <algorithm>

namespace rulestream {

std::string_view job_state_name(JobState state) {
  switch (state) {
    case JobState::Queued:
      return "Queued";
    case JobState::Running:
      return "Running";
    case JobState::Finished:
      return "Finished";
    case JobState::Error:
      return "Error";
  }
  return "Unknown";
}

JobRegistry::JobRegistry(std::size_t history_limit, std::size_t events_per_job)
    : history_limit_(history_limit), events_per_job_(std::max<std::size_t>(1, events_per_job)) {}

JobRegistry::Entry* JobRegistry::find(const std::string& id) {
  const auto found = entries_.find(id);
  return found == entries_.end() ? nullptr : &found->second;
}

bool JobRegistry::add(const std::string& id, const std::string& path,
                      std::optional<TrialFormat> format) {
  std::lock_guard lock(mutex_);
  Entry entry;
  entry.job.id = id;
  entry.job.path = path;
  entry.job.format = format;
  entry.job.found = std::chrono::system_clock::now();
  changed(entry);
  return entries_.try_emplace(id, std::move(entry)).second;
}

void JobRegistry::start(const std::string& id, std::shared_ptr<const PipelineConfig> config) {
  std::lock_guard lock(mutex_);
  Entry* entry = find(id);
  if (!entry) return;
  entry->job.state = JobState::Running;
  entry->job.rules.clear();
  for (const RuleConfig& rule : config->rules) {
    RuleProgress progress;
    progress.rule_configuration =
        rule.configuration_name.empty() ? rule.rule : rule.configuration_name;
    progress.rule = rule.rule;
    entry->job.rules.push_back(std::move(progress));
  }
  entry->job.config = std::move(config);
  changed(*entry);
}

void JobRegistry::changed(Entry& entry) {
  update_conditions(entry.job.conditions, entry.job, std::chrono::system_clock::now());
}

void JobRegistry::record(const std::string& id, const RuleEvent& event) {
  std::lock_guard lock(mutex_);
  Entry* entry = find(id);
  if (!entry) return;
  if (entry->job.trial.empty()) entry->job.trial = event.trial;
  auto& rules = entry->job.rules;
  auto rule = std::find_if(rules.begin(), rules.end(), [&](const RuleProgress& progress) {
    return progress.rule_configuration == event.rule_configuration;
  });
  if (rule == rules.end()) {  // a rule the configuration did not name: still shown
    RuleProgress progress;
    progress.rule_configuration = event.rule_configuration;
    progress.rule = event.rule;
    rules.push_back(std::move(progress));
    rule = std::prev(rules.end());
  }
  if (event.kind == RuleEvent::Kind::IncidentResolved) {
    rule->open_incidents = std::max<std::int64_t>(0, rule->open_incidents - 1);
  } else if (event.kind == RuleEvent::Kind::ConditionMet) {
    if (event.incident && event.incident->state == IncidentNote::State::Opened) {
      ++rule->incidents;
      ++rule->open_incidents;
    }
    ++rule->firings;
    rule->last_finding = event.message;
    rule->last_finding_step = event.global_step;
  } else {
    rule->status = event.status;
    rule->status_message =
        event.status == RuleStatus::Error || event.status == RuleStatus::NotApplicable
            ? event.message
            : "";
  }
  changed(*entry);
  entry->events.push_back(event);
  if (entry->events.size() > events_per_job_) {
    entry->events.pop_front();
    ++entry->job.events_dropped;
  }
}

void JobRegistry::set_last_step(const std::string& id, std::int64_t step) {
  std::lock_guard lock(mutex_);
  if (Entry* entry = find(id)) entry->job.last_step = std::max(entry->job.last_step, step);
}

void JobRegistry::end(Entry& entry, JobState state) {
  if (entry.job.state == JobState::Finished || entry.job.state == JobState::Error) return;
  entry.job.state = state;
  entry.job.ended = std::chrono::system_clock::now();
  changed(entry);
  ended_.push_back(entry.job.id);
  while (ended_.size() > history_limit_) {
    entries_.erase(ended_.front());
    ended_.pop_front();
  }
}

void JobRegistry::finish(const std::string& id) {
  std::lock_guard lock(mutex_);
  if (Entry* entry = find(id)) end(*entry, JobState::Finished);
}

void JobRegistry::fail(const std::string& id, const std::string& reason) {
  std::lock_guard lock(mutex_);
  if (Entry* entry = find(id)) {
    entry->job.error = reason;
    end(*entry, JobState::Error);
  }
}

void JobRegistry::requeue(const std::string& id) {
  std::lock_guard lock(mutex_);
  Entry* entry = find(id);
  if (!entry) return;
  std::erase(ended_, id);
  JobSnapshot found;  // Queued, nothing read, no rules
  found.id = entry->job.id;
  found.path = entry->job.path;
  found.format = entry->job.format;
  found.found = entry->job.found;
  entry->job = std::move(found);
  entry->events.clear();
  changed(*entry);
}

std::vector<JobSnapshot> JobRegistry::jobs() const {
  std::lock_guard lock(mutex_);
  std::vector<JobSnapshot> jobs;
  jobs.reserve(entries_.size());
  for (const auto& [id, entry] : entries_) jobs.push_back(entry.job);
  return jobs;
}

std::optional<JobSnapshot> JobRegistry::job(const std::string& id) const {
  std::lock_guard lock(mutex_);
  const auto found = entries_.find(id);
  if (found == entries_.end()) return std::nullopt;
  return found->second.job;
}

std::optional<std::vector<RuleEvent>> JobRegistry::events(const std::string& id) const {
  std::lock_guard lock(mutex_);
  const auto found = entries_.find(id);
  if (found == entries_.end()) return std::nullopt;
  return std::vector<RuleEvent>(found->second.events.begin(), found->second.events.end());
}

std::map<JobState, std::size_t> JobRegistry::count_by_state() const {
  std::lock_guard lock(mutex_);
  std::map<JobState, std::size_t> counts;
  for (const JobState state : kAllJobStates) counts[state] = 0;
  for (const auto& [id, entry] : entries_) ++counts[entry.job.state];
  return counts;
}

}  // namespace rulestream
