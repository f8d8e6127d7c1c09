// `rulestream watch` and `rulestream replay`: the same pipeline, following or not.
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "apps/cli/cli.hpp"
#include "apps/cli/commands.hpp"
#include "apps/cli/exit_status.hpp"
#include "apps/cli/path_command_line.hpp"
#include "apps/cli/rule_cli_options.hpp"
#include "apps/cli/storage_cli_options.hpp"
#include "core/model/exceptions.hpp"
#include "core/model/human_bytes.hpp"
#include "engine/graph/configuration_check.hpp"
#include "engine/graph/job.hpp"
#include "engine/graph/rules_file.hpp"
#include "engine/graph/sink_factory.hpp"
#include "engine/graph/stop_action.hpp"
#include "engine/graph/trial_presence.hpp"
#include "rules/rule_registry.hpp"
#include "sources/open/folder_changes.hpp"
#include "sources/open/storage_factory.hpp"

namespace rulestream::cli {
namespace {

namespace po = boost::program_options;

// Redraws one status line on stderr until stopped: steps, files, bytes, rate, ETA.
class ProgressLine {
 public:
  ProgressLine(const JobProgress& progress, std::ostream& err)
      : progress_(progress), err_(err), thread_([this] { loop(); }) {}
  ~ProgressLine() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    wake_.notify_all();
    thread_.join();
    err_ << "\r\033[K" << std::flush;
  }

 private:
  void loop() {
    const auto start = std::chrono::steady_clock::now();
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return done_; })) {
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const auto files = progress_.index_files.load();
      const auto seen = progress_.index_files_seen.load();
      const double bytes = static_cast<double>(progress_.event_bytes.load());
      std::ostringstream line;
      line << "\r\033[Kstep " << progress_.last_step.load() << "  ";
      if (const auto values = progress_.values.load(); values > 0) {
        line << values << " values  ";  // a logdir's: series values, not steps of files
      } else {
        line << progress_.steps_released << " steps  " << files << "/" << seen << " files  ";
      }
      line << human_bytes(bytes) << "  " << human_bytes(seconds > 0 ? bytes / seconds : 0) << "/s";
      if (files > 0 && seen > files && seconds > 0) {
        line << "  ETA " << std::fixed << std::setprecision(0)
             << seconds * static_cast<double>(seen - files) / static_cast<double>(files) << " s";
      }
      err_ << line.str() << std::flush;
    }
  }

  const JobProgress& progress_;
  std::ostream& err_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

// Ctrl-C and SIGTERM ask the pipeline to stop (it drains and reports), on a thread of its own
// that is stopped and joined however the run ends: a std::thread destroyed still joinable, as
// when the run throws, would abort the process.
class StopOnSignals {
 public:
  explicit StopOnSignals(std::function<void()> stop) : signals_(io_, SIGINT, SIGTERM) {
    signals_.async_wait([stop = std::move(stop)](const boost::system::error_code& error, int) {
      if (!error) stop();
    });
    thread_ = std::thread([this] {
      try {
        io_.run();
      } catch (const std::exception& error) {  // out of a thread it would end the process
        std::cerr << "rulestream: stopping on a signal failed: " << error.what() << "\n";
      }
    });
  }
  ~StopOnSignals() {
    signals_.cancel();
    io_.stop();
    thread_.join();
  }
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

 private:
  boost::asio::io_context io_;
  boost::asio::signal_set signals_;
  std::thread thread_;
};

// For a watch: the format of what the path holds, waiting (and saying so once) until the job
// writes its first files; nullopt when SIGINT or SIGTERM came first. A local folder is looked
// at again as soon as something lands in it (FolderChanges), other storage every `poll`. A
// replay never waits: require_known_format.
std::optional<TrialFormat> await_format(const Storage& storage, const std::string& path,
                                        std::chrono::milliseconds poll, const std::string& prefix,
                                        std::ostream& err) {
  std::mutex mutex;
  std::condition_variable wake;
  bool stopped = false;
  const StopOnSignals stop_on_signals([&] {
    {
      std::lock_guard lock(mutex);
      stopped = true;
    }
    wake.notify_all();
  });
  // A folder that does not exist is smdebug's pipeline's one-line error, as it always was.
  if (!storage.root_exists()) return TrialFormat::Smdebug;
  std::error_code error;
  std::optional<FolderChanges> changes;
  if (std::filesystem::is_directory(path, error)) changes.emplace(path);
  // How often a stop is looked for while waiting on the folder.
  constexpr std::chrono::milliseconds kStopCheck{100};
  bool said = false;
  for (;;) {
    if (const auto format = detect_format(storage)) return *format;
    if (!said) {
      err << prefix << storage.describe() << ": no trial files yet; waiting for the job to appear\n"
          << std::flush;
      said = true;
    }
    const auto next_look = std::chrono::steady_clock::now() + poll;
    for (;;) {
      {
        std::unique_lock lock(mutex);
        if (stopped) return std::nullopt;
        if (!changes || !changes->watching()) {
          if (wake.wait_for(lock, poll, [&] { return stopped; })) return std::nullopt;
          break;
        }
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          next_look - std::chrono::steady_clock::now());
      if (left <= std::chrono::milliseconds::zero()) break;
      if (changes->wait(std::min(left, kStopCheck))) break;  // something landed: look now
    }
  }
}

// The summary on stderr, whatever the format: what was read, the problems, each rule's status.
void print_summary(const std::string& prefix, const JobOutcome& report, std::ostream& err) {
  err << prefix << report.read << "; " << report.conditions_met << " rule events";
  if (!report.problems.empty()) err << "; " << report.problems.size() << " problems reported";
  err << "\n";
  constexpr std::size_t kShownProblems = 20;
  for (std::size_t i = 0; i < report.problems.size() && i < kShownProblems; ++i) {
    err << "  problem: " << report.problems[i].message << "\n";
  }
  if (report.problems.size() > kShownProblems) {
    err << "  ... and " << report.problems.size() - kShownProblems << " more\n";
  }
  for (const auto& status : report.statuses) {
    err << "  " << status.rule_configuration << " (" << status.rule
        << "): " << rule_status_name(*status.status) << ", fired " << status.times_fired
        << " times in " << status.steps_evaluated << " " << report.evaluated_unit << " evaluated"
        << (status.message.empty() ? "" : " - " + status.message) << "\n";
  }
  if (report.interrupted) {
    err << prefix << "interrupted: "
        << (report.unread.empty() ? "not read to the end" : report.unread + " were not read")
        << "\n";
  }
}

int run_stream(bool follow, const std::vector<std::string>& args, std::ostream& out,
               std::ostream& err) {
  const std::string command = follow ? "watch" : "replay";
  const std::string prefix = "rulestream " + command + ": ";
  po::options_description visible(
      "rulestream " + command + " PATH... [options]\n\n" +
      (follow ? "Follows a training job as it writes (a local folder or s3://bucket/prefix),\n"
                "running rules on each step as it lands, until the job writes its end-of-job\n"
                "marker (or Ctrl-C).\n"
              : "Runs rules over an archived job as fast as the disk and cores allow.\n") +
      "The first PATH is the trial rules look at; others are there for rules that compare\n"
      "runs. Exit status: 0 no rule fired, 1 a rule fired, 2 an error.\n\noptions");
  visible.add_options()("help,h", "show this help");
  add_rule_options(visible);
  visible.add_options()(
      "sink", po::value<std::vector<std::string>>()->value_name("SPEC"),
      "stdout[:json], file:PATH, webhook:URL, slack:URL, alertmanager:URL or a plugin's "
      "TYPE[:TARGET] "
      "(repeatable; default stdout)")("format", po::value<std::string>()->value_name("text|json"),
                                      "the default stdout sink's format")(
      "start-step", po::value<std::int64_t>()->value_name("N"), "first global step to evaluate")(
      "end-step", po::value<std::int64_t>()->value_name("N"),
      "evaluate steps before this one only")(
      "max-memory", po::value<std::size_t>()->value_name("MB")->default_value(512),
      "memory for decoded values held as copies (from S3 or compressed files; a local file's "
      "values are decoded again from its mapping) and for inflating compressed files; "
      "reductions are always kept")(
      "worker-grace", po::value<double>()->value_name("SECONDS")->default_value(0),
      "release a step without its missing workers after this long (0: wait)")(
      "threads", po::value<int>()->value_name("N")->default_value(0), "worker threads (0: all)")(
      "no-data-crc", "skip payload CRC checks (length CRCs are always checked)")(
      "progress", po::value<std::string>()->value_name("auto|on|off")->default_value("auto"),
      "a progress line on stderr (auto: replay on a terminal)")(
      "stop-pid", po::value<std::int64_t>()->value_name("PID"),
      "stop training by signalling this process, for rules that ask to stop "
      "(stop_training_on_fire) and have no stop action of their own")(
      "stop-signal", po::value<std::string>()->value_name("SIGNAL")->default_value("SIGTERM"),
      "the signal --stop-pid sends")(
      "stop-command", po::value<std::string>()->value_name("CMD"),
      "stop training by running CMD through /bin/sh, for the same rules");
  if (follow) {
    visible.add_options()("poll-interval",
                          po::value<double>()->value_name("SECONDS")->default_value(2),
                          "how often to look for new files (S3: one poll; a folder: a rescan "
                          "besides inotify)");
  }
  add_storage_options(visible);
  auto parsed = parse_path_command_line(args, visible, prefix, out, err);
  if (const int* done = std::get_if<int>(&parsed)) return *done;
  const po::variables_map& options = std::get<po::variables_map>(parsed);
  if (!options.count("path")) {
    err << prefix << "missing PATH (a trial folder)\n";
    return kExitError;
  }

  PipelineConfig config;
  config.paths = options["path"].as<std::vector<std::string>>();
  config.follow = follow;
  try {
    read_rule_options(options, config);
    if (options.count("sink")) {
      for (const auto& argument : options["sink"].as<std::vector<std::string>>()) {
        config.sinks.push_back(parse_sink_argument(argument));
      }
    }
    if (config.sinks.empty()) {
      SinkConfig stdout_sink;
      stdout_sink.type = "stdout";
      config.sinks.push_back(stdout_sink);
    }
    if (options.count("format")) {
      const std::string format = options["format"].as<std::string>();
      if (format != "json" && format != "text") {
        throw std::invalid_argument("--format must be text or json, not '" + format + "'");
      }
      for (auto& sink : config.sinks) {
        if (sink.type == "stdout") sink.json = format == "json";
      }
    }
    // No rule named: a logdir gets the default set, once its format is known (below).
    const bool default_rules = config.rules.empty();
    if (default_rules) config.rules = default_rule_configs();
    if (options.count("start-step")) config.start_step = options["start-step"].as<std::int64_t>();
    if (options.count("end-step")) config.end_step = options["end-step"].as<std::int64_t>();
    config.max_memory = options["max-memory"].as<std::size_t>() << 20;
    const double grace = options["worker-grace"].as<double>();
    // At most a year: the milliseconds must fit, and longer is no grace at all.
    if (!(grace >= 0.0 && grace <= 365.0 * 24 * 3600)) {
      throw std::invalid_argument(
          "--worker-grace must be a number of seconds from 0 to 31536000, "
          "not " +
          std::to_string(grace));
    }
    config.worker_grace = std::chrono::milliseconds(static_cast<std::int64_t>(grace * 1000.0));
    config.threads = options["threads"].as<int>();
    config.check_data_crc = options.count("no-data-crc") == 0;
    const std::string progress = options["progress"].as<std::string>();
    if (progress != "auto" && progress != "on" && progress != "off") {
      throw std::invalid_argument("--progress must be auto, on or off");
    }
    // auto looks at the process's terminals, so only when err is the process's stderr: a
    // caller that captures err (tests, an embedding program) gets no escape codes.
    config.progress =
        progress == "on" || (progress == "auto" && !follow && &err == &std::cerr &&
                             ::isatty(STDOUT_FILENO) != 0 && ::isatty(STDERR_FILENO) != 0);
    config.storage = storage_options_from(options);
    if (follow) {
      const double poll = options["poll-interval"].as<double>();
      if (!(poll > 0) || !std::isfinite(poll)) {
        throw std::invalid_argument("--poll-interval must be a positive number of seconds");
      }
      config.poll_interval = std::chrono::milliseconds(
          std::max<std::int64_t>(1, static_cast<std::int64_t>(poll * 1000.0)));
      config.poll_interval_chosen = !options["poll-interval"].defaulted();
    }
    if (options.count("stop-pid")) {
      StopAction stop;
      stop.pid = options["stop-pid"].as<std::int64_t>();
      if (*stop.pid <= 0 || *stop.pid > std::numeric_limits<std::int32_t>::max()) {
        throw std::invalid_argument("--stop-pid must be a process id (a positive integer), not " +
                                    std::to_string(*stop.pid));
      }
      try {
        stop.signal = parse_signal(options["stop-signal"].as<std::string>());
      } catch (const std::invalid_argument& error) {
        throw std::invalid_argument(std::string("--stop-signal: ") + error.what());
      }
      config.default_stop_actions.push_back(stop);
    } else if (!options["stop-signal"].defaulted()) {
      throw std::invalid_argument("--stop-signal goes with --stop-pid");
    }
    if (options.count("stop-command")) {
      StopAction stop;
      stop.command = options["stop-command"].as<std::string>();
      if (stop.command.empty()) throw std::invalid_argument("--stop-command needs a command");
      config.default_stop_actions.push_back(stop);
    }
    // A bad rule, parameter or action fails here: before any sink file is created or any trial
    // looked at.
    check_configuration(config);
    // Replay of a place without trial files would evaluate nothing and pass as NoIssuesFound: a
    // mistyped path must not pass a CI gate. A watch may start before the job wrote anything:
    // it says once that it waits, and learns the format from the first files that appear.
    const auto storage = open_storage(config.paths.front(), config.storage);
    const std::optional<TrialFormat> format =
        follow ? await_format(*storage, config.paths.front(), config.poll_interval, prefix, err)
               : require_known_format(*storage);

    if (default_rules && format == TrialFormat::Smdebug) {
      throw std::invalid_argument(
          "no rules: an smdebug trial's rules are named, as SageMaker's are: give --rule NAME "
          "or --rules FILE ('rulestream rules' lists them)");
    }

    std::vector<std::unique_ptr<Sink>> sinks;
    for (const auto& sink : config.sinks) sinks.push_back(make_sink(sink, out));
    const bool show_progress = config.progress;
    // Stopped while waiting for the job to appear: the job, opened as smdebug's pipeline opens
    // a folder, reports that it evaluated nothing, as a watch stopped before the first step
    // does.
    const std::unique_ptr<Job> job =
        open_job(std::move(config), std::move(sinks), format.value_or(TrialFormat::Smdebug));
    if (!format) job->request_stop();
    job->on_notice([&](const std::string& line) { err << prefix << line << "\n" << std::flush; });

    JobOutcome report;
    {
      // Ctrl-C / SIGTERM: drain and report
      const StopOnSignals stop_on_signals([&job] { job->request_stop(); });
      std::optional<ProgressLine> line;
      if (show_progress) line.emplace(job->progress(), err);
      report = job->run();
    }
    print_summary(prefix, report, err);
    return exit_status_of(report);

  } catch (const RulestreamError& error) {
    err << prefix << error.what() << "\n";
  } catch (const std::invalid_argument& error) {
    err << prefix << error.what() << "\n";
  }
  return kExitError;
}

}  // namespace

int run_watch(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return run_stream(true, args, out, err);
}

int run_replay(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return run_stream(false, args, out, err);
}

}  // namespace rulestream::cli
