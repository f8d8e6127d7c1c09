#include <boost/program_options.hpp>
#include <charconv>
#include <chrono>
#include <exception>
#include <filesystem>
#include <iomanip>
#include <ostream>

#include "apps/cli/cli.hpp"
#include "apps/cli/commands.hpp"
#include "apps/simulator/job_simulator.hpp"
#include "apps/simulator/tensorboard_simulator.hpp"
#include "core/model/exceptions.hpp"

namespace rulestream::cli {
namespace {

namespace po = boost::program_options;

// A bad argument: reported as one line naming the option.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string scenario_list() {
  std::string names;
  for (const JobScenario scenario : kAllJobScenarios) {
    if (!names.empty()) names += ", ";
    names += job_scenario_name(scenario);
  }
  return names;
}

// Integers are parsed strictly: Boost's lexical_cast would wrap "-1" around for unsigned types.
template <typename Integer>
Integer parse_integer(const po::variables_map& options, const std::string& name, Integer fallback) {
  if (!options.count(name)) return fallback;
  const auto& text = options[name].as<std::string>();
  Integer value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw UsageError("--" + name + ": '" + text + "' is not " +
                     (std::is_signed_v<Integer> ? "an integer" : "a non-negative integer") +
                     " in range");
  }
  return value;
}

Compression parse_compression(const std::string& text) {
  if (text == "zlib") return Compression::Zlib;
  if (text == "gzip") return Compression::Gzip;
  if (text == "none") return Compression::None;
  throw UsageError("--compress: '" + text + "' is not one of zlib, gzip, none");
}

JobSimulatorOptions to_options(const po::variables_map& options) {
  JobSimulatorOptions job;
  job.output = options["out"].as<std::string>();
  const auto& name = options["scenario"].as<std::string>();
  const auto scenario = job_scenario_from_name(name);
  if (!scenario) {
    throw UsageError("--scenario: unknown scenario '" + name + "' (one of " + scenario_list() +
                     ")");
  }
  job.scenario = *scenario;
  const auto workers = parse_integer<std::int64_t>(options, "workers", job.workers);
  if (workers < 1 || workers > 4096) {
    throw UsageError("--workers must be in 1..4096 (got " + std::to_string(workers) + ")");
  }
  job.workers = static_cast<int>(workers);
  const auto layers = parse_integer<std::int64_t>(options, "layers", job.layers);
  if (layers < 2 || layers > 10000) {
    throw UsageError("--layers must be in 2..10000 (got " + std::to_string(layers) + ")");
  }
  job.layers = static_cast<int>(layers);
  job.steps = parse_integer<std::int64_t>(options, "steps", job.steps);
  job.tensor_size = parse_integer<std::int64_t>(options, "tensor-size", job.tensor_size);
  job.extra_tensors = parse_integer<std::int64_t>(options, "extra-tensors", job.extra_tensors);
  job.extra_tensor_size =
      parse_integer<std::int64_t>(options, "extra-tensor-size", job.extra_tensor_size);
  job.save_interval = parse_integer<std::int64_t>(options, "save-interval", job.save_interval);
  job.eval_every = parse_integer<std::int64_t>(options, "eval-every", job.eval_every);
  job.eval_steps = parse_integer<std::int64_t>(options, "eval-steps", job.eval_steps);
  if (options.count("fault-step")) {
    job.fault_step = parse_integer<std::int64_t>(options, "fault-step", 0);
  }
  job.seed = parse_integer<std::uint64_t>(options, "seed", job.seed);
  job.reductions_only = options.count("reductions-only") > 0;
  job.write_end_marker = options.count("no-end-marker") == 0;
  job.step_delay =
      std::chrono::milliseconds(parse_integer<std::int64_t>(options, "step-delay-ms", 0));
  if (job.step_delay.count() < 0) throw UsageError("--step-delay-ms must not be negative");
  if (options.count("compress")) {
    job.compression = parse_compression(options["compress"].as<std::string>());
  }
  job.overwrite = options.count("force") > 0;
  return job;
}

// The CLI checks the output folder itself so that the error can name --force.
void check_output(const std::filesystem::path& output, bool overwrite) {
  std::error_code error;
  const auto status = std::filesystem::status(output, error);
  if (!std::filesystem::exists(status)) return;
  if (!std::filesystem::is_directory(status)) {
    throw UsageError("'" + output.string() + "' exists and is not a folder");
  }
  if (!overwrite && !std::filesystem::is_empty(output, error) && !error) {
    throw UsageError("'" + output.string() +
                     "' is not empty (use --force to write into it anyway)");
  }
}

std::string tensorboard_scenario_list() {
  std::string names;
  for (const TensorBoardScenario scenario : kAllTensorBoardScenarios) {
    if (!names.empty()) names += ", ";
    names += tensorboard_scenario_name(scenario);
  }
  return names;
}

// `--format tensorboard`: a logdir (apps/simulator/tensorboard_simulator.hpp).
int simulate_logdir(const po::variables_map& options, std::ostream& out) {
  for (const char* smdebug_only :
       {"workers", "layers", "tensor-size", "extra-tensors", "extra-tensor-size", "eval-every",
        "eval-steps", "save-interval", "reductions-only", "no-end-marker", "compress"}) {
    if (options.count(smdebug_only)) {
      throw UsageError(std::string("--") + smdebug_only +
                       " is for --format smdebug (a TensorBoard logdir has no " +
                       "workers, layers or index files)");
    }
  }
  TensorBoardSimulatorOptions logdir;
  logdir.output = options["out"].as<std::string>();
  const auto& name = options["scenario"].as<std::string>();
  const auto scenario = tensorboard_scenario_from_name(name);
  if (!scenario) {
    throw UsageError("--scenario: unknown scenario '" + name +
                     "' for --format tensorboard (one of " + tensorboard_scenario_list() + ")");
  }
  logdir.scenario = *scenario;
  logdir.runs = static_cast<int>(parse_integer<std::int64_t>(options, "runs", logdir.runs));
  logdir.steps = parse_integer<std::int64_t>(options, "steps", logdir.steps);
  logdir.extra_tags = parse_integer<std::int64_t>(options, "extra-tags", logdir.extra_tags);
  if (options.count("fault-step")) {
    logdir.fault_step = parse_integer<std::int64_t>(options, "fault-step", 0);
  }
  logdir.seed = parse_integer<std::uint64_t>(options, "seed", logdir.seed);
  logdir.step_delay =
      std::chrono::milliseconds(parse_integer<std::int64_t>(options, "step-delay-ms", 0));
  if (logdir.step_delay.count() < 0) throw UsageError("--step-delay-ms must not be negative");
  const std::string scalars = options["scalars"].as<std::string>();
  if (scalars != "simple_value" && scalars != "tensor") {
    throw UsageError("--scalars: '" + scalars + "' is not one of simple_value, tensor");
  }
  logdir.tensor_scalars = scalars == "tensor";
  check_output(logdir.output, options.count("force") > 0);
  const auto started = std::chrono::steady_clock::now();
  const TensorBoardSimulation simulation = simulate_tensorboard(logdir);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - started;
  out << "simulated " << tensorboard_scenario_name(logdir.scenario) << " TensorBoard logdir in "
      << logdir.output.string() << ": " << logdir.runs << (logdir.runs == 1 ? " run, " : " runs, ")
      << logdir.steps << " steps, " << simulation.values << " scalar values, " << simulation.bytes
      << " bytes";
  if (simulation.fault_step >= 0) out << ", fault from step " << simulation.fault_step;
  out << ", in " << std::fixed << std::setprecision(2) << elapsed.count() << " s\n";
  return kExitOk;
}

std::string strip_library_prefix(const std::string& message) {
  constexpr std::string_view kPrefix = "JobSimulator: ";
  return message.starts_with(kPrefix) ? message.substr(kPrefix.size()) : message;
}

}  // namespace

int run_simulate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description visible(
      "rulestream simulate OUT --scenario NAME [options]\n\n"
      "Writes a synthetic training job in smdebug's format (an MLP fc1..fcN with ReLUs,\n"
      "CrossEntropyLoss), or with --format tensorboard a TensorBoard logdir (train/loss,\n"
      "eval/loss, train/grad_norm, train/learning_rate), healthy or with a fault that rules\n"
      "must catch from --fault-step on.\nScenarios: " +
      scenario_list() + "; with --format tensorboard: " + tensorboard_scenario_list() +
      ".\nEach scenario's exact signature is documented in apps/simulator/.\n\n"
      "options");
  visible.add_options()("help,h", "show this help")(
      "scenario", po::value<std::string>()->value_name("NAME"), "what goes wrong (required)")(
      "format",
      po::value<std::string>()->value_name("smdebug|tensorboard")->default_value("smdebug"),
      "what to write: an smdebug trial or a TensorBoard logdir")(
      "runs", po::value<std::string>()->value_name("N"),
      "tensorboard: runs, run_0.. (default 1: the logdir is the run)")(
      "extra-tags", po::value<std::string>()->value_name("N"),
      "tensorboard: more scalar tags per run, metrics/extra_<i> (default 0)")(
      "scalars",
      po::value<std::string>()->value_name("simple_value|tensor")->default_value("simple_value"),
      "tensorboard: scalars as PyTorch writes them, or as TF2's one-element tensors")(
      "workers", po::value<std::string>()->value_name("N"),
      "workers writing files, worker_0.. (default 1)")(
      "steps", po::value<std::string>()->value_name("N"),
      "TRAIN steps (default 100; tensorboard: 1000)")(
      "eval-every", po::value<std::string>()->value_name("N"),
      "run EVAL steps after every N TRAIN steps (default 0: never)")(
      "eval-steps", po::value<std::string>()->value_name("N"), "EVAL steps each time (default 2)")(
      "save-interval", po::value<std::string>()->value_name("N"),
      "save every N-th mode step (default 1)")("layers", po::value<std::string>()->value_name("N"),
                                               "fc layers, >= 2 (default 3)")(
      "tensor-size", po::value<std::string>()->value_name("N"),
      "elements per weight, weight gradient and activation (default 256)")(
      "extra-tensors", po::value<std::string>()->value_name("N"),
      "extra small tensors: layer<i>.weight and its gradient, alternating (default 0)")(
      "extra-tensor-size", po::value<std::string>()->value_name("N"),
      "elements per extra tensor (default 16)")(
      "fault-step", po::value<std::string>()->value_name("N"),
      "global step where the fault starts (default: the middle of the job)")(
      "seed", po::value<std::string>()->value_name("N"), "seed of every value (default 0)")(
      "reductions-only", "save weights and gradients as reductions and shapes only")(
      "no-end-marker", "leave out training_job_end.ts (a job still running)")(
      "step-delay-ms", po::value<std::string>()->value_name("N"),
      "sleep N ms after each saved step, for a watcher to follow (default 0)")(
      "compress", po::value<std::string>()->value_name("zlib|gzip"),
      "compress event files as TensorFlow can")("force", "write into OUT even if it is not empty");
  po::options_description all;
  all.add(visible).add_options()("out", po::value<std::string>());
  po::positional_options_description positional;
  positional.add("out", 1);

  po::variables_map options;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), options);
    po::notify(options);
  } catch (const po::error& error) {
    err << "rulestream simulate: " << error.what() << "\n";
    return kExitError;
  }
  if (options.count("help")) {
    out << visible << "\n";
    return kExitOk;
  }
  if (!options.count("out")) {
    err << "rulestream simulate: missing OUT (the folder to write the job into)\n";
    return kExitError;
  }
  if (!options.count("scenario")) {
    err << "rulestream simulate: missing --scenario (one of " << scenario_list() << ")\n";
    return kExitError;
  }

  try {
    const std::string format = options["format"].as<std::string>();
    if (format == "tensorboard") return simulate_logdir(options, out);
    if (format != "smdebug") {
      throw UsageError("--format: '" + format + "' is not one of smdebug, tensorboard");
    }
    for (const char* tensorboard_only : {"runs", "extra-tags"}) {
      if (options.count(tensorboard_only)) {
        throw UsageError(std::string("--") + tensorboard_only + " is for --format tensorboard");
      }
    }
    if (!options["scalars"].defaulted()) throw UsageError("--scalars is for --format tensorboard");
    const JobSimulatorOptions job = to_options(options);
    const JobSimulator simulator(job);
    check_output(job.output, job.overwrite);
    const auto started = std::chrono::steady_clock::now();
    const SimulationSummary summary = simulator.run();
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - started;
    out << "simulated " << job_scenario_name(job.scenario) << " job in " << job.output.string()
        << ": " << job.workers << (job.workers == 1 ? " worker, " : " workers, ")
        << summary.global_steps << " steps (" << summary.train_steps << " TRAIN, "
        << summary.eval_steps << " EVAL; " << summary.saved_steps << " saved), "
        << summary.tensor_count << " tensors, " << summary.records << " records, "
        << summary.event_bytes << " bytes of event files";
    if (job.scenario != JobScenario::Healthy) out << ", fault from step " << summary.fault_step;
    out << ", in " << std::fixed << std::setprecision(2) << elapsed.count() << " s\n";
  } catch (const UsageError& error) {
    err << "rulestream simulate: " << error.what() << "\n";
    return kExitError;
  } catch (const std::invalid_argument& error) {
    err << "rulestream simulate: " << strip_library_prefix(error.what()) << "\n";
    return kExitError;
  } catch (const std::exception& error) {
    err << "rulestream simulate: " << error.what() << "\n";
    return kExitError;
  }
  return kExitOk;
}

}  // namespace rulestream::cli
