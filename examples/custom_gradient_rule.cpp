// Runs the CustomGradientRule of custom_gradient_rule.hpp over a trial and prints what fired.
//
//   example_custom_gradient_rule [TRIAL_PATH [THRESHOLD]]
//
// Without a path it simulates a small training job whose gradients explode at step 20 and
// evaluates the rule on that.

#include "examples/custom_gradient_rule.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>

#include "apps/simulator/job_simulator.hpp"
#include "core/model/rule_event.hpp"

namespace {

// A simulated job in a temporary folder, removed when done.
class SimulatedJob {
 public:
  SimulatedJob() {
    path_ = std::filesystem::temp_directory_path() /
            ("rulestream-example-" + std::to_string(::getpid())) / "simulated-exploding";
    std::filesystem::remove_all(path_.parent_path());
    rulestream::JobSimulatorOptions options;
    options.output = path_;
    options.scenario = rulestream::JobScenario::Exploding;
    options.steps = 40;
    options.fault_step = 20;  // gradients x1e4 at 20, infinite at 21, NaN from 22
    rulestream::JobSimulator(options).run();
  }
  ~SimulatedJob() {
    std::error_code ignored;
    std::filesystem::remove_all(path_.parent_path(), ignored);
  }
  SimulatedJob(const SimulatedJob&) = delete;
  SimulatedJob& operator=(const SimulatedJob&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

rulestream::RuleEvent fired_event(const rulestream::Trial& trial, const rulestream::Rule& rule,
                                  std::int64_t step) {
  rulestream::RuleEvent event;
  event.kind = rulestream::RuleEvent::Kind::ConditionMet;
  event.time = std::chrono::system_clock::now();
  event.trial = trial.name();
  event.rule = std::string(rule.name());
  event.rule_configuration = event.rule;
  event.global_step = step;
  event.mode = trial.mode(step).value_or(rulestream::Mode::Global);
  event.mode_step = trial.mode_step(step).value_or(step);
  event.tensors = rule.last_finding().tensors;
  event.figures = rule.last_finding().figures;
  event.message = rule.last_finding().message;
  return event;
}

int run(const std::string& path, const std::string& threshold) {
  // A registry of our own; RuleRegistry::builtin() would hold the built-in rules beside it.
  rulestream::RuleRegistry registry;
  registry.add(example::CustomGradientRule::spec());

  const rulestream::Trial trial = rulestream::Trial::open(path);
  const auto rule =
      registry.create("custom_gradient_rule", {.base_trial = trial}, {{"threshold", threshold}});

  // invoke_rule one saved step at a time, so that each firing is printed with its finding.
  std::int64_t evaluated = 0;
  std::int64_t fired = 0;
  for (const std::int64_t step : trial.steps()) {
    const rulestream::InvokeResult result = rulestream::invoke_rule(*rule, step, step + 1);
    evaluated += result.steps_evaluated;
    for (const std::int64_t fired_step : result.triggered_steps) {
      std::cout << fired_event(trial, *rule, fired_step).to_text() << "\n";
      ++fired;
    }
  }

  rulestream::RuleEvent status;
  status.kind = rulestream::RuleEvent::Kind::Status;
  status.time = std::chrono::system_clock::now();
  status.trial = trial.name();
  status.rule = std::string(rule->name());
  status.rule_configuration = status.rule;
  status.status =
      fired > 0 ? rulestream::RuleStatus::IssuesFound : rulestream::RuleStatus::NoIssuesFound;
  status.steps_evaluated = evaluated;
  status.times_fired = fired;
  std::cout << status.to_text() << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 3 ||
      (argc > 1 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h"))) {
    std::cerr << "usage: example_custom_gradient_rule [TRIAL_PATH [THRESHOLD]]\n";
    return argc > 3 ? 2 : 0;
  }
  try {
    if (argc > 1) return run(argv[1], argc > 2 ? argv[2] : "20.0");
    const SimulatedJob job;
    std::cout << "simulated an exploding training job in " << job.path().string() << "\n";
    return run(job.path().string(), "20.0");
  } catch (const std::exception& error) {
    std::cerr << "example_custom_gradient_rule: " << error.what() << "\n";
    return 1;
  }
}
