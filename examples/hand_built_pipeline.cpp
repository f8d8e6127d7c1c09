// Composes a rule pipeline by hand from rulestream's library, as a user does who wants more
// than the `rulestream replay` command: a rule of their own beside a built-in one, a registry
// that knows both, and a sink of their own that tallies what fired.
//
//   example_hand_built_pipeline [TRIAL_PATH [GROWTH]]
//
// Without a path it simulates a two-worker training job whose gradients explode at step 20 and
// replays that. GROWTH (default 10) is how many times a gradient's norm must grow from one step
// to the next before GradientNormSpike fires.
//
// Only public headers are used; copy this file and change the rule, the sink or the config.

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "apps/simulator/job_simulator.hpp"
#include "core/model/exceptions.hpp"
#include "core/model/rule_event.hpp"
#include "engine/graph/pipeline_config.hpp"
#include "engine/graph/rule_pipeline.hpp"
#include "rules/rule.hpp"
#include "rules/rule_registry.hpp"
#include "sinks/sink.hpp"
#include "trial/api/tensor.hpp"
#include "trial/api/trial.hpp"

namespace example {

// --- 1. A rule of our own -------------------------------------------------------------------
//
// Fires when the l2 norm of a gradient, taken over every worker's share of it, grows more than
// `growth` times from the previous step that saved it. In data-parallel training each worker
// saves the gradient of its own shard; one worker's norm can spike from a bad batch while the
// job as a whole is fine, so the rule asks for the whole-job figure: combined_reduction joins
// the workers' cached reductions without reading their values again.
class GradientNormSpikeRule final : public rulestream::Rule {
 public:
  GradientNormSpikeRule(rulestream::Trial base_trial, double growth, std::string collection)
      : Rule(std::move(base_trial)), growth_(growth), collection_(std::move(collection)) {}

  // Parameters arrive as strings, as in SageMaker's RuleParameters. ParameterReader parses them
  // and names the rule, the parameter and the value in its errors; finish() rejects parameters
  // the rule does not know (a typo in a config must not be ignored).
  static rulestream::RuleSpec spec() {
    rulestream::RuleSpec spec;
    spec.name = "GradientNormSpike";
    spec.aliases = {"gradient_norm_spike"};
    spec.description = "gradients whose norm across workers grows too fast from a step to the next";
    spec.parameters = {
        {"growth", "float", "10",
         "fires when a gradient's l2 norm grows more than this many times"},
        {"collection", "string", "gradients", "the collection whose tensors are watched"}};
    spec.create = [](const rulestream::RuleContext& context,
                     const rulestream::RuleParameters& parameters) {
      rulestream::ParameterReader reader("GradientNormSpike", parameters);
      const double growth = reader.number("growth", 10.0);
      const std::string collection = reader.text("collection", "gradients");
      reader.finish();
      if (!(growth > 1.0)) throw reader.invalid("growth", "must be greater than 1");
      return std::unique_ptr<rulestream::Rule>(
          new GradientNormSpikeRule(context.base_trial, growth, collection));
    };
    return spec;
  }

  std::string_view name() const override { return "GradientNormSpike"; }

  // Called once per step, in step order, never concurrently with itself: the norms of the
  // previous step can live in a plain member.
  bool invoke_at_step(std::int64_t step) override {
    const rulestream::Trial& trial = base_trial();
    rulestream::Finding finding;
    double largest_growth = 0.0;
    bool any_saved = false;
    for (const std::string& tensor_name :
         trial.tensor_names({.step = step, .collection = collection_})) {
      const rulestream::Tensor tensor = trial.tensor(tensor_name);
      double norm = 0.0;
      try {
        norm = tensor.combined_reduction(step, rulestream::Reduction::L2).as_double();
      } catch (const rulestream::TensorUnavailableForStep&) {
        continue;  // not computable at this step (say, a worker saved only its mean)
      }
      any_saved = true;
      const auto previous = previous_norms_.find(tensor_name);
      // An infinite norm after a finite one is a spike; NaN compares false and never fires.
      if (previous != previous_norms_.end() && previous->second > 0.0 &&
          norm > growth_ * previous->second) {
        const double growth = norm / previous->second;
        finding.tensors.push_back(tensor_name);
        finding.figures.push_back({"l2", norm, tensor_name});
        finding.figures.push_back({"previous_l2", previous->second, tensor_name});
        if (growth > largest_growth || finding.message.empty()) {
          largest_growth = growth;
          std::ostringstream message;
          message << std::setprecision(3) << tensor_name << " l2 norm across "
                  << tensor.workers(step).size() << " workers ";
          if (std::isinf(norm)) {
            message << "became infinite (" << previous->second << " -> inf)";
          } else {
            message << "grew " << growth << "x (" << previous->second << " -> " << norm
                    << "), more than " << growth_ << "x";
          }
          finding.message = message.str();
        }
      }
      previous_norms_[tensor_name] = norm;
    }
    // Nothing to look at (an EVAL step saves no gradients): say so, and invoke_rule and the
    // pipeline skip the step instead of counting it as evaluated.
    if (!any_saved) {
      throw rulestream::TensorUnavailableForStep("collection " + collection_, step,
                                                 rulestream::Mode::Global,
                                                 "no tensor of it has an l2 norm at this step");
    }
    if (finding.tensors.empty()) return false;
    if (finding.tensors.size() > 1) {
      finding.message += " (and " + std::to_string(finding.tensors.size() - 1) + " more)";
    }
    finding.figures.push_back({"growth", growth_, {}});
    report(std::move(finding));
    return true;
  }

  // The pipeline decodes only what some rule reads: for this one, the collection's tensors.
  rulestream::RequiredTensors required_tensors() const override {
    return {.collections = {collection_}};
  }

 private:
  double growth_;
  std::string collection_;
  std::map<std::string, double> previous_norms_;
};

// --- 2. A sink of our own ---------------------------------------------------------------------
//
// The pipeline calls write() from its own threads, several rules at once, so the sink locks.
// write() must return quickly: printing a line is fine; a sink that talks to a slow service
// would queue and deliver on a thread of its own (see sinks/webhook_sink.hpp).
struct Tally {
  std::int64_t fired = 0;
  std::int64_t first_step = -1;
  std::string status = "-";
  std::int64_t evaluated = 0;
};

class TallySink final : public rulestream::Sink {
 public:
  // The tally outlives the sink (the pipeline owns and destroys its sinks), so it is shared.
  using Tallies = std::map<std::string, Tally>;
  explicit TallySink(std::shared_ptr<Tallies> tallies) : tallies_(std::move(tallies)) {}

  std::string describe() const override { return "tally"; }

  void write(const rulestream::RuleEvent& event) override {
    std::lock_guard lock(mutex_);
    Tally& tally = (*tallies_)[event.rule_configuration];
    if (event.kind == rulestream::RuleEvent::Kind::ConditionMet) {
      ++tally.fired;
      if (tally.first_step < 0 || event.global_step < tally.first_step) {
        tally.first_step = event.global_step;
      }
      std::cout << event.to_text() << "\n";
    } else {
      tally.status = rule_status_name(event.status.value_or(rulestream::RuleStatus::Error));
      tally.evaluated = event.steps_evaluated;
    }
  }

  void flush() override {
    std::lock_guard lock(mutex_);
    std::cout.flush();
  }

 private:
  std::mutex mutex_;
  std::shared_ptr<Tallies> tallies_;
};

void print_table(const TallySink::Tallies& tallies) {
  std::cout << "\n"
            << std::left << std::setw(20) << "rule" << std::setw(15) << "status" << std::right
            << std::setw(7) << "fired" << std::setw(11) << "evaluated" << std::setw(12)
            << "first step"
            << "\n";
  for (const auto& [rule, tally] : tallies) {
    std::cout << std::left << std::setw(20) << rule << std::setw(15) << tally.status << std::right
              << std::setw(7) << tally.fired << std::setw(11) << tally.evaluated << std::setw(12)
              << (tally.first_step < 0 ? std::string("-") : std::to_string(tally.first_step))
              << "\n";
  }
}

// --- 3. Something to replay -----------------------------------------------------------------

// A simulated two-worker job in a temporary folder, removed when done.
class SimulatedJob {
 public:
  SimulatedJob() {
    path_ = std::filesystem::temp_directory_path() /
            ("rulestream-pipeline-example-" + std::to_string(::getpid())) / "simulated-exploding";
    std::filesystem::remove_all(path_.parent_path());
    rulestream::JobSimulatorOptions options;
    options.output = path_;
    options.scenario = rulestream::JobScenario::Exploding;
    options.workers = 2;
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

// --- 4. The pipeline --------------------------------------------------------------------------

int run(const std::string& path, const std::string& growth) {
  // A registry of our own: the built-in rules, and ours beside them.
  rulestream::RuleRegistry registry = rulestream::RuleRegistry::builtin();
  registry.add(GradientNormSpikeRule::spec());

  // What `rulestream replay PATH --rules rules.json` would build from its command line. The
  // rules are in SageMaker's shape; parameters stay strings until the rule parses them.
  rulestream::PipelineConfig config;
  config.paths = {path};
  config.follow = false;  // replay what is there; true would watch a running job
  config.rules = {
      {.configuration_name = "GradientSpike",
       .rule = "GradientNormSpike",
       .parameters = {{"growth", growth}}},
      {.configuration_name = "ExplodingGradients",
       .rule = "ExplodingTensor",
       .parameters = {{"collection_names", "gradients"}}},
  };
  config.max_memory = std::size_t{64} << 20;  // decoded values kept for rules; plenty here

  // Sinks are handed over as objects (config.sinks describes the CLI's built-in ones).
  auto tallies = std::make_shared<TallySink::Tallies>();
  std::vector<std::unique_ptr<rulestream::Sink>> sinks;
  sinks.push_back(std::make_unique<TallySink>(tallies));

  // Builds the rules (a bad parameter throws RuleConfigError here, before anything is read),
  // then runs to the end of the files and reports each rule's status to the sinks.
  rulestream::RulePipeline pipeline(std::move(config), std::move(sinks), registry);
  const rulestream::PipelineReport report = pipeline.run();

  print_table(*tallies);
  std::cout << report.steps_released << " steps replayed, " << report.tensors_decoded
            << " tensors decoded, " << report.conditions_met << " conditions met\n";
  for (const rulestream::TrialProblem& problem : report.problems) {
    std::cout << "problem: " << problem.path << ": " << problem.message << "\n";
  }
  return 0;
}

}  // namespace example

int main(int argc, char** argv) {
  if (argc > 3 ||
      (argc > 1 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h"))) {
    std::cerr << "usage: example_hand_built_pipeline [TRIAL_PATH [GROWTH]]\n";
    return argc > 3 ? 2 : 0;
  }
  try {
    const std::string growth = argc > 2 ? argv[2] : "10";
    if (argc > 1) return example::run(argv[1], growth);
    const example::SimulatedJob job;
    std::cout << "simulated a two-worker exploding training job in " << job.path().string() << "\n";
    return example::run(job.path().string(), growth);
  } catch (const std::exception& error) {
    std::cerr << "example_hand_built_pipeline: " << error.what() << "\n";
    return 1;
  }
}
