#pragma once

// A job's conditions beside its state, as Kubernetes objects carry them: each a type, a status
// (True or False), a reason (a CamelCase word a program may match), a message for a person,
// and when its status last changed. A dashboard or an operator asks "is it being followed, has
// anything fired, did every rule evaluate" without reading every rule.
//
//   Following        True while the job runs; False Queued, Finished or Error (why).
//   IssuesFound      True once a rule fired (which, and the latest finding); False before.
//   RulesEvaluating  False once a rule ended in Error (which, and why); True otherwise.

#include <chrono>
#include <string>
#include <vector>

namespace rulestream {

struct JobSnapshot;

struct JobCondition {
  std::string type;
  bool status = false;
  std::string reason;
  std::string message;
  std::chrono::system_clock::time_point last_transition;
};

// `conditions` (the job's, as last updated) brought up to date with `job` at `now`: a
// condition keeps its last_transition while its status stays.
void update_conditions(std::vector<JobCondition>& conditions, const JobSnapshot& job,
                       std::chrono::system_clock::time_point now);

}  // namespace rulestream
