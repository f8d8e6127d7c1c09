#include "tests/support/one_rule_replay.hpp"

#include <utility>

#include "apps/simulator/job_simulator.hpp"
#include "tests/support/recording_sink.hpp"

namespace rulestream::testing {

std::filesystem::path write_simulated_job(const std::filesystem::path& dir, std::int64_t steps) {
  JobSimulatorOptions options;
  options.output = dir / "job";
  options.steps = steps;
  options.save_interval = 1;
  options.tensor_size = 16;
  JobSimulator(options).run();
  return options.output;
}

OneRuleReplay replay_one_rule(
    const std::filesystem::path& trial, int threads, const std::string& rule_name,
    std::function<std::unique_ptr<Rule>(const RuleContext&, const RuleParameters&)> create) {
  RuleRegistry registry = RuleRegistry::builtin();
  registry.add({.name = rule_name, .create = std::move(create)});
  PipelineConfig config;
  config.paths = {trial.string()};
  config.rules = {{"rule", rule_name, {}}};
  config.threads = threads;
  auto sink = std::make_unique<RecordingSink>();
  const RecordingSink* recording = sink.get();
  std::vector<std::unique_ptr<Sink>> sinks;
  sinks.push_back(std::move(sink));
  RulePipeline pipeline(config, std::move(sinks), registry);
  OneRuleReplay result;
  result.report = pipeline.run();
  for (const RuleEvent& event : recording->events()) {
    if (event.rule_configuration == "rule") result.events.push_back(event);
  }
  return result;
}

OneRuleReplay replay_builtin_rule(const std::filesystem::path& trial, int threads,
                                  const std::string& rule) {
  // Registered under a name of its own: the registry holds the built-in one under `rule`.
  return replay_one_rule(trial, threads, rule + "OnItsOwn",
                         [rule](const RuleContext& context, const RuleParameters& parameters) {
                           return RuleRegistry::builtin().create(rule, context, parameters);
                         });
}

std::vector<std::string> fired_tensors_by_step(const std::vector<RuleEvent>& events) {
  std::vector<std::string> lines;
  for (const RuleEvent& event : events) {
    if (event.kind != RuleEvent::Kind::ConditionMet) continue;
    std::string line = std::to_string(event.global_step) + ":";
    for (const std::string& tensor : event.tensors) line += " " + tensor;
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace rulestream::testing
