#include <boost/json.hpp>
#include <boost/program_options.hpp>
#include <iomanip>
#include <ostream>
#include <sstream>

#include "apps/cli/cli.hpp"
#include "apps/cli/commands.hpp"
#include "apps/cli/json_values.hpp"
#include "apps/cli/storage_cli_options.hpp"
#include "apps/cli/tensorboard_inspect.hpp"
#include "core/model/exceptions.hpp"
#include "core/model/python_json.hpp"
#include "engine/graph/job.hpp"
#include "engine/graph/trial_presence.hpp"
#include "sources/open/storage_factory.hpp"
#include "stages/reduce/reductions.hpp"
#include "trial/api/tensor.hpp"
#include "trial/api/trial.hpp"

namespace rulestream::cli {
namespace {

namespace po = boost::program_options;

// One (step, worker) of a tensor with everything inspect reports about it.
struct TensorStepReport {
  std::int64_t step = 0;
  Mode mode = Mode::Global;
  std::int64_t mode_step = 0;
  std::string worker;
  std::optional<DType> dtype;
  std::optional<Shape> shape;
  std::vector<ReductionKey> saved;
  ReductionSet reductions;
  std::optional<std::string> value_error;
};

TensorStepReport report_step(const Trial& trial, const Tensor& tensor, std::int64_t step,
                             const std::string& worker) {
  TensorStepReport report;
  report.step = step;
  report.mode = trial.mode(step).value_or(Mode::Global);
  report.mode_step = trial.mode_step(step).value_or(step);
  report.worker = worker;
  // Saved reductions first: they are what the job meant, and exist without a value.
  for (const auto& [key, scalar] : tensor.reduction_values(step, Mode::Global, worker)) {
    report.saved.push_back(key);
    report.reductions.set(key, scalar);
    report.dtype = scalar.dtype();
  }
  try {
    const TensorValue value = tensor.value(step, Mode::Global, worker);
    report.dtype = value.dtype();
    report.shape = value.shape();
    const ReductionSet computed = compute_reductions(value);
    for (int index = 0; index < kReductionKeyCount; ++index) {
      const auto key = ReductionKey::from_index(index);
      if (!report.reductions.get(key) && computed.get(key)) {
        report.reductions.set(key, *computed.get(key));
      }
    }
  } catch (const TensorUnavailableForStep& error) {
    report.value_error = error.what();
  }
  if (!report.shape) {
    try {
      report.shape = tensor.shape(step, Mode::Global, worker);
    } catch (const ShapeUnavailableForStep&) {
    }
  }
  return report;
}

std::vector<TensorStepReport> report_tensor(const Trial& trial, const std::string& name) {
  const Tensor tensor = trial.tensor(name);
  std::vector<TensorStepReport> reports;
  for (const std::int64_t step : tensor.steps(Mode::Global, true)) {
    for (const auto& worker : tensor.workers(step)) {
      reports.push_back(report_step(trial, tensor, step, worker));
    }
  }
  return reports;
}

boost::json::object tensor_json(const std::string& name,
                                const std::vector<TensorStepReport>& reports) {
  boost::json::array steps;
  for (const auto& report : reports) {
    boost::json::object entry;
    entry["step"] = report.step;
    entry["mode"] = std::string(mode_name(report.mode));
    entry["mode_step"] = report.mode_step;
    entry["worker"] = report.worker;
    if (report.dtype) entry["dtype"] = std::string(dtype_name(*report.dtype));
    if (report.shape) entry["shape"] = json_shape(*report.shape);
    boost::json::object reductions;
    for (const bool abs : {false, true}) {
      for (const Reduction reduction : kAllReductions) {
        const ReductionKey key{reduction, abs};
        if (const auto& scalar = report.reductions.get(key)) {
          reductions[reduction_key_name(key)] = json_scalar(*scalar);
        }
      }
    }
    entry["reductions"] = std::move(reductions);
    boost::json::array saved;
    for (const auto& key : report.saved)
      saved.push_back(boost::json::string(reduction_key_name(key)));
    entry["saved_reductions"] = std::move(saved);
    steps.push_back(std::move(entry));
  }
  boost::json::object document;
  document["tensor"] = name;
  document["steps"] = std::move(steps);
  return document;
}

std::string format_double(double value) {
  std::ostringstream text;
  text << std::setprecision(6) << value;
  return text.str();
}

void print_tensor_human(const std::string& name, const std::vector<TensorStepReport>& reports,
                        std::ostream& out) {
  out << "tensor " << name << ": " << reports.size() << " saved (step, worker) pairs\n";
  out << std::left << std::setw(8) << "step" << std::setw(9) << "mode" << std::setw(10)
      << "mode_step" << std::setw(12) << "worker" << std::setw(10) << "dtype" << std::setw(14)
      << "shape" << std::setw(14) << "min" << std::setw(14) << "max" << std::setw(14) << "mean"
      << "abs_mean\n";
  auto figure = [](const TensorStepReport& report, Reduction reduction, bool abs = false) {
    const auto& scalar = report.reductions.get({reduction, abs});
    return scalar ? format_double(scalar->as_double()) : std::string("-");
  };
  for (const auto& report : reports) {
    std::string shape = "-";
    if (report.shape) {
      shape = "[";
      for (std::size_t i = 0; i < report.shape->size(); ++i) {
        if (i > 0) shape += ',';
        shape += std::to_string((*report.shape)[i]);
      }
      shape += "]";
    }
    out << std::left << std::setw(8) << report.step << std::setw(9) << mode_name(report.mode)
        << std::setw(10) << report.mode_step << std::setw(12) << report.worker << std::setw(10)
        << (report.dtype ? std::string(dtype_name(*report.dtype)) : "-") << std::setw(14) << shape
        << std::setw(14) << figure(report, Reduction::Min) << std::setw(14)
        << figure(report, Reduction::Max) << std::setw(14) << figure(report, Reduction::Mean)
        << figure(report, Reduction::Mean, true) << "\n";
  }
}

boost::json::object summary_json(const Trial& trial) {
  boost::json::object document;
  document["trial"] = trial.name();
  document["path"] = trial.path();
  boost::json::array tensors;
  for (const auto& name : trial.tensor_names()) tensors.push_back(boost::json::string(name));
  document["tensors"] = std::move(tensors);
  boost::json::array steps;
  for (const auto step : trial.steps(Mode::Global, true)) steps.push_back(step);
  document["steps"] = std::move(steps);
  boost::json::object steps_by_mode;
  boost::json::array modes;
  for (const Mode mode : trial.modes()) {
    modes.push_back(boost::json::string(mode_name(mode)));
    boost::json::array mode_steps;
    for (const auto step : trial.steps(mode, true)) mode_steps.push_back(step);
    steps_by_mode[mode_name(mode)] = std::move(mode_steps);
  }
  document["modes"] = std::move(modes);
  document["steps_by_mode"] = std::move(steps_by_mode);
  boost::json::array workers;
  for (const auto& worker : trial.workers()) workers.push_back(boost::json::string(worker));
  document["workers"] = std::move(workers);
  document["num_workers"] = trial.num_workers();
  boost::json::object collections;
  for (const auto& [name, collection] : trial.collections()) {
    boost::json::array members;
    for (const auto& tensor : trial.tensor_names({.collection = name})) {
      members.push_back(boost::json::string(tensor));
    }
    collections[name] = std::move(members);
  }
  document["collections"] = std::move(collections);
  document["ended"] = trial.has_training_ended();
  document["loaded_all_steps"] = trial.loaded_all_steps();
  document["last_complete_step"] = trial.last_complete_step();
  boost::json::array problems;
  for (const auto& problem : trial.problems()) {
    problems.push_back(boost::json::string(problem.message));
  }
  document["problems"] = std::move(problems);
  return document;
}

void print_summary_human(const Trial& trial, std::ostream& out) {
  out << "trial      " << trial.name() << " (" << trial.path() << ")\n";
  out << "status     "
      << (trial.has_training_ended() ? "ended" : "running (no end-of-job marker yet)")
      << ", last complete step " << trial.last_complete_step() << "\n";
  const auto workers = trial.workers();
  out << "workers    " << workers.size() << " of " << trial.num_workers() << ":";
  for (const auto& worker : workers) out << " " << worker;
  out << "\n";
  const auto steps = trial.steps(Mode::Global, true);
  out << "steps      " << steps.size() << " saved";
  if (!steps.empty()) out << " (global " << steps.front() << ".." << steps.back() << ")";
  for (const Mode mode : trial.modes()) {
    out << ", " << mode_name(mode) << " " << trial.steps(mode, true).size();
  }
  out << "\n";
  const auto names = trial.tensor_names();
  out << "tensors    " << names.size() << "\n";
  for (const auto& name : names) {
    out << "  " << std::left << std::setw(40) << name << " "
        << trial.tensor(name).steps(Mode::Global, true).size() << " steps\n";
  }
  const auto collections = trial.collections();
  out << "collections " << collections.size() << "\n";
  for (const auto& [name, collection] : collections) {
    const auto members = trial.tensor_names({.collection = name});
    out << "  " << std::left << std::setw(14) << name << " " << members.size() << " tensors";
    if (!members.empty()) {
      out << ":";
      for (std::size_t i = 0; i < members.size() && i < 6; ++i) out << " " << members[i];
      if (members.size() > 6) out << " ...";
    }
    out << "\n";
  }
  for (const auto& problem : trial.problems()) out << "problem    " << problem.message << "\n";
}

}  // namespace

int run_inspect(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description visible(
      "rulestream inspect PATH [options]\n\n"
      "Summarises a trial (a folder or s3:// prefix written by smdebug)\n"
      "or a TensorBoard logdir; or one tensor's steps, workers, shapes\n"
      "and reductions; or one TensorBoard tag's every value.\n\noptions");
  visible.add_options()("help,h", "show this help")("json", "print one JSON document")(
      "tensor", po::value<std::string>()->value_name("NAME"),
      "smdebug: report this tensor at every step and worker")(
      "tag", po::value<std::string>()->value_name("TAG"),
      "TensorBoard: every value of this tag, in file order")(
      "run", po::value<std::string>()->value_name("RUN"),
      "TensorBoard: the run of --tag (its folder relative to the logdir, '.' for the logdir)");
  add_storage_options(visible);
  po::options_description all;
  all.add(visible).add_options()("path", po::value<std::string>());
  po::positional_options_description positional;
  positional.add("path", 1);

  po::variables_map options;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), options);
    po::notify(options);
  } catch (const po::error& error) {
    err << "rulestream inspect: " << error.what() << "\n";
    return kExitError;
  }
  if (options.count("help")) {
    out << visible << "\n";
    return kExitOk;
  }
  if (!options.count("path")) {
    err << "rulestream inspect: missing PATH (a trial folder or a TensorBoard logdir)\n";
    return kExitError;
  }
  const std::string path = options["path"].as<std::string>();
  try {
    TrialOptions trial_options;
    trial_options.auto_refresh = false;  // one consistent look at the trial
    const auto storage = open_storage(path, storage_options_from(options));
    const bool json = options.count("json") > 0;
    if (const TrialFormat format = require_known_format(*storage); format != TrialFormat::Smdebug) {
      if (options.count("tensor")) {
        throw std::invalid_argument("--tensor is for smdebug trials; " + storage->describe() +
                                    " is a " + std::string(series_format_of(format).job_name) +
                                    ": use --tag (and --run)");
      }
      TensorBoardInspectRequest request;
      request.json = json;
      if (options.count("run")) request.run = options["run"].as<std::string>();
      if (options.count("tag")) request.tag = options["tag"].as<std::string>();
      inspect_series(*storage, format, request, out);
      return kExitOk;
    }
    if (options.count("tag") || options.count("run")) {
      throw std::invalid_argument("--tag and --run are for TensorBoard logdirs; " +
                                  storage->describe() + " is an smdebug trial: use --tensor");
    }
    const Trial trial = Trial::open(storage, trial_options);
    if (options.count("tensor")) {
      const std::string name = options["tensor"].as<std::string>();
      const auto reports = report_tensor(trial, name);
      if (json) {
        out << dump_python_json(tensor_json(name, reports), InvalidUtf8::SurrogateEscape) << "\n";
      } else {
        print_tensor_human(name, reports, out);
      }
    } else if (json) {
      out << dump_python_json(summary_json(trial), InvalidUtf8::SurrogateEscape) << "\n";
    } else {
      print_summary_human(trial, out);
    }
  } catch (const RulestreamError& error) {
    err << "rulestream inspect: " << error.what() << "\n";
    return kExitError;
  } catch (const std::invalid_argument& error) {
    err << "rulestream inspect: " << error.what() << "\n";
    return kExitError;
  }
  return kExitOk;
}

}  // namespace rulestream::cli
