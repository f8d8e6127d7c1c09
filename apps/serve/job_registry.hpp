#pragma once

// Where every job the service knows stands: its state, its last step, each rule's status and
// findings, its latest rule events. What `/api/jobs` answers and what `/metrics` counts jobs by.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "apps/serve/job_conditions.hpp"
#include "core/model/rule_event.hpp"
#include "engine/graph/pipeline_config.hpp"
#include "engine/graph/trial_presence.hpp"

namespace rulestream {

// Queued: found, waiting for a free slot (--max-running). Running: its rules follow it.
// Finished: its end-of-job marker came, or it was idle for --idle-timeout, and every rule
// reported a status. Error: it could not be run or read (the reason says why).
enum class JobState { Queued, Running, Finished, Error };
inline constexpr JobState kAllJobStates[] = {JobState::Queued, JobState::Running,
                                             JobState::Finished, JobState::Error};
std::string_view job_state_name(JobState state);  // "Queued", ...

// One rule of a job, as SageMaker's DescribeTrainingJob lists rule evaluation statuses.
struct RuleProgress {
  std::string rule_configuration;
  std::string rule;
  std::optional<RuleStatus> status;  // nullopt while the job runs: InProgress
  std::string status_message;        // why, for Error
  std::int64_t firings = 0;          // conditions met so far
  std::int64_t incidents = 0;        // incidents they opened so far
  std::int64_t open_incidents = 0;   // of those, not resolved yet
  std::string last_finding;          // the message of the latest condition met
  std::optional<std::int64_t> last_finding_step;
};

struct JobSnapshot {
  std::string id;
  std::string path;
  // nullopt: not known (the job's storage refused to be looked at).
  std::optional<TrialFormat> format;
  JobState state = JobState::Queued;
  std::string error;            // Error: why
  std::int64_t last_step = -1;  // the latest step read (-1: none yet)
  std::vector<RuleProgress> rules;
  std::chrono::system_clock::time_point found;
  std::optional<std::chrono::system_clock::time_point> ended;
  std::int64_t events_dropped = 0;  // older events forgotten (events_per_job)
  // How its rule events name the job (RuleEvent::trial), from the first of them; empty before.
  std::string trial;
  // Its conditions (job_conditions.hpp), brought up to date at every change.
  std::vector<JobCondition> conditions;
  // What the job runs (its rules, for its report page); null until it starts.
  std::shared_ptr<const PipelineConfig> config;
};

// Thread-safe: every member may be called from any thread at once (one mutex; each call copies
// what it returns, so no reference into the registry outlives the lock). Running and queued
// jobs are always kept; of the ended ones, the `history_limit` most recently ended, the older
// forgotten. Each job keeps its latest `events_per_job` rule events.
class JobRegistry {
 public:
  JobRegistry(std::size_t history_limit, std::size_t events_per_job);

  // A job found: Queued. False (and nothing changes) when the id is taken.
  bool add(const std::string& id, const std::string& path, std::optional<TrialFormat> format);
  // Running with these rules (all InProgress) and this configuration.
  void start(const std::string& id, std::shared_ptr<const PipelineConfig> config);
  // A rule event of the job: a condition met counts as a firing and becomes the rule's last
  // finding; a status ends the rule's InProgress. Kept for /events.
  void record(const std::string& id, const RuleEvent& event);
  void set_last_step(const std::string& id, std::int64_t step);
  void finish(const std::string& id);
  void fail(const std::string& id, const std::string& reason);
  // Queued again, as found, its rules and events forgotten: the job was handed over to another
  // instance (sharing a Redis), so what this one saw of it no longer says where it stands.
  void requeue(const std::string& id);

  std::vector<JobSnapshot> jobs() const;  // by id
  std::optional<JobSnapshot> job(const std::string& id) const;
  // The job's kept rule events, oldest first; nullopt for an unknown id.
  std::optional<std::vector<RuleEvent>> events(const std::string& id) const;
  std::map<JobState, std::size_t> count_by_state() const;
  std::size_t events_per_job() const { return events_per_job_; }

 private:
  struct Entry {
    JobSnapshot job;
    std::deque<RuleEvent> events;
  };
  Entry* find(const std::string& id);      // under mutex_
  static void changed(Entry& entry);       // under mutex_: the conditions brought up to date
  void end(Entry& entry, JobState state);  // under mutex_

  const std::size_t history_limit_;
  const std::size_t events_per_job_;
  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;
  std::deque<std::string> ended_;  // ids, in the order they ended
};

}  // namespace rulestream
