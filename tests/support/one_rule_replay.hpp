#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/model/rule_event.hpp"
#include "engine/graph/rule_pipeline.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"

namespace rulestream::testing {

// For tests of how a pipeline runs one rule (RuleStage's forms): a simulated job, and a replay of
// it through a pipeline that runs a test's own rule alone.

// A one-worker job of `steps` steps under `dir`/job, every step saved, tensors of 16 floats.
std::filesystem::path write_simulated_job(const std::filesystem::path& dir, std::int64_t steps);

struct OneRuleReplay {
  std::vector<RuleEvent> events;  // the rule's, in the order they reached the sink
  PipelineReport report;
};

// Replays `trial` on `threads` threads with one rule, configured as "rule", that `create` makes
// (registered under `rule_name` beside the built-in rules).
OneRuleReplay replay_one_rule(
    const std::filesystem::path& trial, int threads, const std::string& rule_name,
    std::function<std::unique_ptr<Rule>(const RuleContext&, const RuleParameters&)> create);

// Replays `trial` on `threads` threads with the built-in rule `rule` alone, its defaults.
OneRuleReplay replay_builtin_rule(const std::filesystem::path& trial, int threads,
                                  const std::string& rule);

// The ConditionMet events among `events`, one line each: "<global step>: <tensors>".
std::vector<std::string> fired_tensors_by_step(const std::vector<RuleEvent>& events);

}  // namespace rulestream::testing
