#include "engine/graph/series_pipeline.hpp"

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#include "core/model/exceptions.hpp"
#include "core/model/human_bytes.hpp"
#include "engine/graph/configuration_check.hpp"
#include "engine/graph/series_evaluator.hpp"
#include "engine/graph/sink_routing.hpp"
#include "sources/open/storage_factory.hpp"
#include "sources/open/trial_source_factory.hpp"
#include "stages/series/series_reader.hpp"

namespace rulestream {

// One run: its reader; a series per scalar tag, three per histogram tag (its figures) and one
// for its progress (the wall time of its steps); and the conditions met not yet sent, in the
// order found.
class SeriesPipeline::RunState final : public SeriesValueSink {
 public:
  // `kept`: where the run's values are also kept (SeriesPipeline::keep_series); may be null.
  RunState(const SeriesFormat& format, std::string run, const SeriesNaming& naming,
           const std::vector<std::shared_ptr<const SeriesRule>>& rules, RunSeries* kept)
      : reader(format.make_loader(std::move(run))), naming_(naming), rules_(rules), kept_(kept) {}

  void on_value(const SeriesTag& tag, std::int64_t step, double wall_time,
                const SummaryReading& reading) override {
    if (kept_ != nullptr) kept_->on_value(tag, step, wall_time, reading);
    if (tag.index >= tags_seen_) {  // a tag's first value: does it mark an RL job?
      tags_seen_ = tag.index + 1;
      reinforcement_ = reinforcement_ || naming_.names_reinforcement(tag.name);
    }
    if (!max_step || step > *max_step) {  // a new step: the run's progress series
      max_step = step;
      // A step with no time (a CSV log without a time column) is progress, but nothing for
      // rules on time to judge.
      if (!std::isnan(wall_time)) {
        if (!progress) {
          SeriesInfo info;
          info.run = tag.run;
          info.figure = "wall_time";
          info.run_started = reader->started();
          progress = std::make_unique<SeriesEvaluator>(std::move(info), rules_);
        }
        feed(*progress, step, wall_time);
      }
    }
    if (reading.kind == TagKind::Scalar) {
      if (series.size() <= tag.index) series.resize(tag.index + 1);
      auto& evaluator = series[tag.index];
      if (!evaluator) {
        SeriesInfo info = naming_.describe(tag.run, tag.name, reinforcement_);
        if (info.role == SeriesRole::ReinforcementLoss) ++reinforcement_losses;
        evaluator = std::make_unique<SeriesEvaluator>(std::move(info), rules_);
      }
      ++values;
      feed(*evaluator, step, reading.scalar);
    } else if (reading.kind == TagKind::Histogram) {
      ++values;
      feed_histogram(tag, step, reading.histogram);
    }
  }

  // The figures of a histogram that rules judge, each a series of its own.
  static constexpr std::array<const char*, 3> kFigures{"abs_mean", "variance", "sum"};
  // Findings held before the run sends them (on_findings): memory stays a few thousand
  // findings per run however often its rules fire.
  static constexpr std::size_t kFlushEvery = 4096;

  std::unique_ptr<RunLoader> reader;
  std::vector<std::unique_ptr<SeriesEvaluator>> series;  // by tag index: scalar tags
  // By tag index: histogram tags, a series per figure (kFigures).
  std::vector<std::array<std::unique_ptr<SeriesEvaluator>, 3>> histograms;
  // The run's progress: the wall time of each step beyond every step before it (a restart's
  // steps count again once they pass the highest step written before).
  std::unique_ptr<SeriesEvaluator> progress;
  std::optional<std::int64_t> max_step;
  std::vector<SeriesFinding> findings;
  std::vector<const SeriesEvaluator*> finding_series;  // the series of each finding
  std::function<void(RunState&)> on_findings;          // called by on_value every kFlushEvery
  std::int64_t values = 0;
  // Loss series of a reinforcement-learning job (SeriesRole::ReinforcementLoss), which rules
  // that expect a loss to fall leave alone.
  std::size_t reinforcement_losses = 0;
  // Besides the reader's: files that end inside a record, files that could not be read.
  std::vector<SeriesProblem> problems;
  // How many of the reader's problems a watch has said as they came (notice).
  std::size_t problems_noticed = 0;

 private:
  void feed(SeriesEvaluator& evaluator, std::int64_t step, double value) {
    if (!evaluator.watched()) return;
    const std::size_t before = findings.size();
    evaluator.add(step, value, findings);
    for (std::size_t i = before; i < findings.size(); ++i) finding_series.push_back(&evaluator);
    if (findings.size() >= kFlushEvery && on_findings) on_findings(*this);
  }

  void feed_histogram(const SeriesTag& tag, std::int64_t step, const HistogramFigures& histogram) {
    if (histograms.size() <= tag.index) histograms.resize(tag.index + 1);
    auto& figures = histograms[tag.index];
    const std::optional<double> abs_mean = histogram.abs_mean();
    const std::optional<double> variance =
        histogram.sum_squares && histogram.num > 0.0
            ? std::optional(*histogram.sum_squares / histogram.num -
                            histogram.mean() * histogram.mean())
            : std::nullopt;
    const std::array<std::optional<double>, 3> figure_values{abs_mean, variance, histogram.sum};
    for (std::size_t i = 0; i < kFigures.size(); ++i) {
      if (!figure_values[i]) continue;
      if (!figures[i]) {
        figures[i] = std::make_unique<SeriesEvaluator>(
            naming_.describe_histogram(tag.run, tag.name, kFigures[i]), rules_);
      }
      feed(*figures[i], step, *figure_values[i]);
    }
  }

  const SeriesNaming& naming_;
  const std::vector<std::shared_ptr<const SeriesRule>>& rules_;
  RunSeries* kept_;
  std::size_t tags_seen_ = 0;   // tags whose first value came: indices below this
  bool reinforcement_ = false;  // one of them marks a reinforcement-learning job
};

namespace {

// How often a watch of a local logdir, followed with inotify, lists it all again as a safety
// net (unless a poll was chosen): a listing of 10,000 runs is not free, and inotify reports
// every file that appears or grows.
constexpr std::chrono::milliseconds kLogdirRescan{std::chrono::seconds(30)};
// The longest a local watch goes between looks at the clock (rules about silence) and at its
// progress: a look lists nothing, so it may come more often than the poll.
constexpr std::chrono::milliseconds kMostBetweenTicks{std::chrono::seconds(1)};

std::vector<SinkLabel> labels_of(const PipelineConfig& config,
                                 const std::vector<std::unique_ptr<Sink>>& sinks) {
  std::vector<SinkLabel> labels;
  for (std::size_t i = 0; i < sinks.size(); ++i) {
    labels.push_back(i < config.sinks.size() ? label_of(config.sinks[i])
                                             : label_of(sinks[i]->describe()));
  }
  return labels;
}

}  // namespace

SeriesPipeline::SeriesPipeline(PipelineConfig config, std::vector<std::unique_ptr<Sink>> sinks,
                               SeriesNaming naming, const RuleRegistry& registry,
                               const SeriesFormat& format)
    : config_(std::move(config)),
      format_(format),
      budget_(config_.max_memory),
      sinks_(std::move(sinks)),
      naming_(std::move(naming)) {
  if (config_.paths.empty()) throw std::invalid_argument("SeriesPipeline: no logdir");
  for (const auto& [key, patterns] : config_.tensorboard_names) naming_.replace(key, patterns);
  std::vector<LedgerRule> ledger_rules;
  for (RuleConfig& rule : config_.rules) {
    if (rule.configuration_name.empty()) rule.configuration_name = rule.rule;
    rules_.push_back(registry.create_series(rule.rule, rule.parameters));
    const SeriesRule* series = rules_.back().get();
    const std::string name = series ? std::string(series->name()) : rule.rule;
    ledger_rules.push_back(
        {.configuration_name = rule.configuration_name,
         .rule = name,
         .stop_actions = stop_actions_for(rule, name, series && series->stops_training_on_fire(),
                                          config_.default_stop_actions),
         .only_where_applicable = rule.only_where_applicable,
         .incidents = rule.incidents,
         .clears_itself = series && series->clears_itself()});
  }
  routing_ = std::make_unique<SinkRouting>(config_.rules, labels_of(config_, sinks_));
  ledger_ = std::make_unique<RuleLedger>(
      std::move(ledger_rules), sinks_, *routing_, [this](std::string path, std::string message) {
        if (notice_) notice_(message);
        const std::lock_guard lock(problems_mutex_);
        ledger_problems_.push_back({std::move(path), std::move(message)});
      });
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    if (!rules_[i])
      ledger_->fail(i,
                    "reads smdebug tensors: it does not run on a " + std::string(format_.job_name));
  }
}

SeriesPipeline::~SeriesPipeline() = default;

void SeriesPipeline::request_stop() {
  {
    std::lock_guard lock(stop_mutex_);
    stop_ = true;
    if (following_ != nullptr) following_->stop();
  }
  stop_wake_.notify_all();
}

SeriesReport SeriesPipeline::run() {
  SeriesReport report;
  try {
    const auto storage = open_storage(config_.paths.front(), config_.storage);
    logdir_ = storage->describe();
    ledger_->name_trial(logdir_);
    if (config_.follow) {
      follow(storage, report);
    } else {
      replay(*storage, report);
    }
  } catch (const std::exception& error) {
    // A listing refused, a storage gone: said once, and every rule that did not fire says
    // the job was not read to its end.
    report.source_failure = error.what();
  }
  for (const auto& run : runs_) {
    report.values += run->values;
    for (const auto& series : run->series) {
      if (series) report.restarts += series->restarts();
    }
    for (const auto& figures : run->histograms) {
      for (const auto& series : figures) {
        if (series) report.restarts += series->restarts();
      }
    }
    const std::vector<SeriesProblem>& read = run->reader->problems();
    for (const auto* problems : {&read, &std::as_const(run->problems)}) {
      for (const SeriesProblem& problem : *problems) {
        report.problems.push_back({problem.file, problem.message});
      }
    }
  }
  report.runs = runs_.size();
  std::int64_t last_step = -1;
  for (const auto& run : runs_) {
    if (run->max_step) last_step = std::max(last_step, *run->max_step);
  }
  progress_.values = report.values;
  progress_.event_bytes = report.bytes;
  progress_.last_step = last_step;
  report.read = std::to_string(report.runs) + " runs, " + std::to_string(report.files) + " " +
                std::string(format_.file_noun) + ", " +
                human_bytes(static_cast<double>(report.bytes)) + ", " +
                std::to_string(report.values) + " values" +
                (report.restarts > 0 ? " (" + std::to_string(report.restarts) + " restarts)" : "");
  report.evaluated_unit = "values";
  finish(report);
  return report;
}

void SeriesPipeline::replay(const Storage& storage, SeriesReport& report) {
  const auto listing = storage.list("");
  const auto runs = format_.group_runs(listing);
  for (const RunFiles& run : runs) {
    runs_.push_back(std::make_unique<RunState>(format_, run.run, naming_, rules_,
                                               store_ ? &store_->run(run.run) : nullptr));
    for (const auto& file : run.files) {
      ++report.files;
      report.bytes += file.size;
    }
  }
  // Each run sends its events as it finds them (a few thousand at a time), in its own order;
  // runs read at the same time interleave. Holding a run's events back until the runs before
  // it were sent held a whole run's findings in memory: 700 MiB for the 240,000 events of one
  // run of the benchmark's logdir (benchmarks/RESULTS.md, tensorboard_e2e).
  std::mutex send_mutex;
  for (const auto& run : runs_) {
    run->on_findings = [&](RunState& state) {
      const std::lock_guard lock(send_mutex);
      dispatch(state);
    };
  }
  const auto run_done = [&](std::size_t index) {
    const std::lock_guard lock(send_mutex);
    RunState& state = *runs_[index];
    dispatch(state);
    progress_.values += state.values;
    for (const StoredObject& file : runs[index].files) progress_.event_bytes += file.size;
    if (state.max_step && *state.max_step > progress_.last_step) {
      progress_.last_step = *state.max_step;  // under send_mutex: no other writer
    }
  };
  // A job's runs (Keras' "train" and "validation") are read together, on one thread, its
  // training runs first: rules that pair a job's series (Overfit) see them in that order.
  std::map<std::string, std::vector<std::size_t>> by_job;
  for (std::size_t index = 0; index < runs.size(); ++index) {
    by_job[naming_.job_of(runs[index].run)].push_back(index);
  }
  std::vector<std::vector<std::size_t>> jobs;
  for (auto& [job, members] : by_job) {
    std::stable_sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
      return (naming_.mode_of_run(runs[a].run) == Mode::Train) >
             (naming_.mode_of_run(runs[b].run) == Mode::Train);
    });
    jobs.push_back(std::move(members));
  }
  tbb::task_arena arena(config_.threads > 0 ? config_.threads : tbb::task_arena::automatic);
  std::atomic<bool> skipped{false};
  arena.execute([&] {
    tbb::parallel_for(std::size_t{0}, jobs.size(), [&](std::size_t job) {
      for (const std::size_t index : jobs[job]) {
        RunState& state = *runs_[index];
        for (const StoredObject& file : runs[index].files) {
          if (stop_) {
            skipped = true;
            break;
          }
          try {
            read_run_file(storage, file, *state.reader, state, true, read_options(),
                          state.problems);
          } catch (const StorageError& error) {
            state.problems.push_back(
                {file.path, state.reader->resume_offset(file.path), error.what()});
          }
        }
        run_done(index);
      }
    });
  });
  report.interrupted = skipped;
}

SeriesPipeline::RunState& SeriesPipeline::run_named(const std::string& run) {
  RunState*& state = runs_by_name_[run];
  if (state == nullptr) {
    runs_.push_back(std::make_unique<RunState>(format_, run, naming_, rules_,
                                               store_ ? &store_->run(run) : nullptr));
    state = runs_.back().get();
  }
  return *state;
}

void SeriesPipeline::read_followed(const Storage& storage, const StoredObject& file,
                                   RunState& state) {
  try {
    read_run_file(storage, file, *state.reader, state, false, read_options(), state.problems);
  } catch (const StorageError& error) {
    // A file gone between its listing or announcement and the read (renamed, rotated): the
    // next look finds it again or not.
    static_cast<void>(error);
  }
  // A watch says what went wrong as it happens (a file cut short, replaced, corrupt), not only
  // when it ends.
  const std::vector<SeriesProblem>& found = state.reader->problems();
  for (; state.problems_noticed < found.size(); ++state.problems_noticed) {
    if (notice_) notice_(logdir_ + "/" + found[state.problems_noticed].message);
  }
  dispatch(state);
}

void SeriesPipeline::take_stock(std::size_t files, std::uint64_t bytes, SeriesReport& report) {
  report.files = files;
  report.bytes = bytes;
  if (!noticed_) notice_idle_rules();
  noticed_ = true;
  std::int64_t values = 0;
  std::int64_t last_step = -1;
  for (const auto& each : runs_) {
    values += each->values;
    if (each->max_step) last_step = std::max(last_step, *each->max_step);
  }
  progress_.values = values;
  progress_.event_bytes = bytes;
  progress_.last_step = last_step;
  check_silence(values);
}

void SeriesPipeline::follow(const std::shared_ptr<const Storage>& storage, SeriesReport& report) {
  if (follows_growth(*storage)) {
    follow_announced(storage, report);
  } else {
    follow_by_listing(*storage, report);
  }
}

void SeriesPipeline::follow_announced(const std::shared_ptr<const Storage>& storage,
                                      SeriesReport& report) {
  boost::asio::io_context io;
  {
    const std::lock_guard lock(stop_mutex_);
    if (stop_) return;
    following_ = &io;
  }
  struct LetGo {  // however the following ends, request_stop no longer reaches `io`
    SeriesPipeline& pipeline;
    ~LetGo() {
      const std::lock_guard lock(pipeline.stop_mutex_);
      pipeline.following_ = nullptr;
    }
  } let_go{*this};

  // Each event file's size when last announced, and their sum.
  std::unordered_map<std::string, std::uint64_t> sizes;
  std::uint64_t bytes = 0;
  const auto on_files = [&](std::vector<TrialFile> files) {
    // Training runs first, as a replay reads a job's runs (Overfit pairs them); else in path
    // order, which puts a run's files in the order TensorBoard reads them.
    std::stable_sort(files.begin(), files.end(), [&](const TrialFile& a, const TrialFile& b) {
      return (naming_.mode_of_run(format_.run_of(a.path)) == Mode::Train) >
             (naming_.mode_of_run(format_.run_of(b.path)) == Mode::Train);
    });
    for (const TrialFile& file : files) {
      std::uint64_t& size = sizes[file.path];
      bytes = bytes - size + file.size;
      size = file.size;
      read_followed(*storage,
                    StoredObject{.path = file.path,
                                 .size = file.size,
                                 .modified_ns = file.modified_ns,
                                 .identity = file.identity},
                    run_named(format_.run_of(file.path)));
    }
    take_stock(sizes.size(), bytes, report);
  };
  TrialSourceOptions options{
      .follow = true,
      .poll_interval = config_.poll_interval,
      // What inotify reports needs no look: the whole logdir is listed again only as a safety
      // net, rarely, unless a poll was chosen.
      .rescan_while_watching = config_.poll_interval_chosen
                                   ? config_.poll_interval
                                   : std::max(config_.poll_interval, kLogdirRescan),
      .filter = format_.filter,
      .inotify_hub = config_.inotify_hub};
  const auto source = make_trial_source(io, storage, std::move(options), on_files);
  // Between announcements, a tick that lists nothing: progress, the first notice, and rules
  // about silence. The first comes after the source's first scan was announced (both are
  // queued on `io`, the scan first).
  boost::asio::steady_timer tick(io);
  std::function<void()> on_tick = [&] {
    take_stock(sizes.size(), bytes, report);
    tick.expires_after(std::min(config_.poll_interval, kMostBetweenTicks));
    tick.async_wait([&](const boost::system::error_code& error) {
      if (!error) on_tick();
    });
  };
  source->start();
  boost::asio::post(io, on_tick);
  io.run();  // until request_stop
  source->stop();
  if (std::string problem = source->current_problem(); !problem.empty()) {
    report.source_failure = "the latest look at the " + std::string(format_.job_noun) +
                            " failed: " + std::move(problem);
  }
}

void SeriesPipeline::follow_by_listing(const Storage& storage, SeriesReport& report) {
  std::string current_problem;  // why the latest listing failed; empty when it did not
  for (;;) {
    if (stop_) {
      if (!current_problem.empty()) {
        report.source_failure = "the latest look at the " + std::string(format_.job_noun) +
                                " failed: " + current_problem;
      }
      return;
    }
    std::size_t files = 0;
    std::uint64_t bytes = 0;
    // A listing that fails (refused, a server down past its retries) is said once and tried
    // again at the next poll; a watch stopped while it fails ends as one that could not read
    // the logdir, not as an all-clear.
    std::vector<StoredObject> listing;
    try {
      listing = storage.list("");
      current_problem.clear();
    } catch (const StorageError& error) {
      if (current_problem.empty() && notice_) {
        notice_("cannot list " + storage.describe() + ": " + error.what() +
                "; will retry at the next poll");
      }
      current_problem = error.what();
    }
    // Training runs first, as a replay reads a job's runs (Overfit pairs them).
    auto listed = format_.group_runs(listing);
    std::stable_sort(listed.begin(), listed.end(), [&](const RunFiles& a, const RunFiles& b) {
      return (naming_.mode_of_run(a.run) == Mode::Train) >
             (naming_.mode_of_run(b.run) == Mode::Train);
    });
    for (const RunFiles& run : listed) {
      RunState& state = run_named(run.run);
      for (const StoredObject& file : run.files) {
        ++files;
        bytes += file.size;
        read_followed(storage, file, state);
      }
    }
    // What a failed listing did not see is not silence.
    if (current_problem.empty()) take_stock(files, bytes, report);
    std::unique_lock lock(stop_mutex_);
    stop_wake_.wait_for(lock, config_.poll_interval, [this] { return stop_.load(); });
  }
}

void SeriesPipeline::dispatch(RunState& state) {
  for (std::size_t i = 0; i < state.findings.size(); ++i) {
    SeriesFinding& found = state.findings[i];  // sent once, then forgotten: moved from
    if (found.cleared) {
      ledger_->clear(found.rule, found.finding.tensors.front(), found.step);
      continue;
    }
    const Mode mode = state.finding_series[i]->info().mode;
    ledger_->fire(found.rule,
                  RuleLedger::condition(std::move(found.finding), found.step, mode, found.step));
  }
  state.findings.clear();
  state.finding_series.clear();
}

void SeriesPipeline::check_silence(std::int64_t values) {
  const auto now = std::chrono::steady_clock::now();
  if (values != silence_.values) {  // something new: silences end, and are due again
    silence_.values = values;
    silence_.since = now;
    silence_.reported.assign(rules_.size(), false);
    return;
  }
  silence_.reported.resize(rules_.size(), false);
  std::optional<std::int64_t> last_step;
  for (const auto& run : runs_) {
    if (run->max_step && (!last_step || *run->max_step > *last_step)) last_step = run->max_step;
  }
  const double seconds = std::chrono::duration<double>(now - silence_.since).count();
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    if (!rules_[i] || silence_.reported[i]) continue;
    const auto threshold = rules_[i]->silence_threshold();
    if (!threshold || seconds <= static_cast<double>(threshold->count())) continue;
    silence_.reported[i] = true;
    Finding finding = rules_[i]->silence(last_step, seconds, logdir_);
    if (finding.message.empty()) continue;  // this silence is nothing the rule reports
    const std::int64_t step = last_step.value_or(0);
    ledger_->fire(i, RuleLedger::condition(std::move(finding), step, Mode::Global, step));
  }
}

std::vector<std::int64_t> SeriesPipeline::evaluations() const {
  std::vector<std::int64_t> evaluated(rules_.size(), 0);
  for (const auto& run : runs_) {
    if (run->progress) run->progress->count_evaluations(evaluated);
    for (const auto& series : run->series) {
      if (series) series->count_evaluations(evaluated);
    }
    for (const auto& figures : run->histograms) {
      for (const auto& series : figures) {
        if (series) series->count_evaluations(evaluated);
      }
    }
  }
  return evaluated;
}

void SeriesPipeline::notice_idle_rules() {
  if (!notice_) return;
  const std::vector<std::int64_t> evaluated = evaluations();
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    const std::string& name = config_.rules[i].configuration_name;
    if (!rules_[i]) {
      notice_(name + ": reads smdebug tensors; it does not run on a " +
              std::string(format_.job_name));
    } else if (evaluated[i] == 0) {
      notice_(name + ": nothing to judge in " + logdir_ + " yet: it looks for " +
              rules_[i]->looks_for());
    }
  }
}

std::string SeriesPipeline::values_not_read() const {
  std::size_t count = 0;
  const SeriesProblem* first = nullptr;
  for (const auto& run : runs_) {
    const std::vector<SeriesProblem>& read = run->reader->problems();
    for (const auto* problems : {&read, &std::as_const(run->problems)}) {
      for (const SeriesProblem& problem : *problems) {
        if (!problem.values_lost) continue;
        if (count++ == 0) first = &problem;
      }
    }
  }
  if (count == 0) return "";
  return "could not read all of the " + std::string(format_.job_noun) + ": " +
         std::to_string(count) + (count == 1 ? " problem" : " problems") + " lost values (first, " +
         first->message + ")";
}

void SeriesPipeline::finish(SeriesReport& report) {
  const std::vector<std::int64_t> evaluated = evaluations();
  for (std::size_t i = 0; i < rules_.size(); ++i) ledger_->evaluated(i, evaluated[i]);
  // Values the logdir holds that were not read (a corrupt record ended a file, an Event did not
  // decode): a rule silent on the rest is no all-clear, and one that fired says so beside it.
  const std::string lost = values_not_read();
  std::size_t reinforcement_losses = 0;
  for (const auto& run : runs_) reinforcement_losses += run->reinforcement_losses;
  LedgerSummary summary = ledger_->finish(
      {.source_failure = report.source_failure, .interrupted = report.interrupted, .unread = {}},
      [&](std::size_t rule) {
        RuleAccount account{.caveat = lost, .why_silent = lost};
        if (rules_[rule] && evaluated[rule] == 0) {
          std::string nothing = "had nothing to evaluate: the " + std::string(format_.job_noun) +
                                " has no " + rules_[rule]->looks_for();
          // A loss rule on an RL job: say where its losses went, and how to judge them anyway.
          if (reinforcement_losses > 0 && nothing.find("loss") != std::string::npos) {
            nothing += " (its " + std::to_string(reinforcement_losses) +
                       " loss series are a reinforcement-learning job's, role "
                       "reinforcement_loss, which no rule judges as a loss that should fall; "
                       "name them with tag_regex to judge them)";
          }
          // What was not read may have held it: then it is not known to be missing.
          account.nothing_to_evaluate = lost.empty();
          account.why_silent = lost.empty() ? nothing : lost + "; " + nothing;
        }
        return account;
      });
  report.statuses = std::move(summary.statuses);
  report.conditions_met = summary.conditions_met;
  report.rule_errors = summary.rule_errors;
  const std::lock_guard lock(problems_mutex_);
  report.problems.insert(report.problems.end(), ledger_problems_.begin(), ledger_problems_.end());
}

}  // namespace rulestream
