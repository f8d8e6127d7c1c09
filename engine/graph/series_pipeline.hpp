#pragma once

// Rules over a job of a series format (SeriesFormat: a TensorBoard logdir, a folder of text
// metrics), replayed or followed. The format is a loader stage and a file filter; all the rest
// is this one engine. Each run's files are read in the format's order by its loader
// (stages/tensorboard, stages/metrics), each scalar tag (or column) becomes a series with a role
// and a mode (SeriesNaming), each histogram tag three (its abs_mean, variance and sum), each run
// one more (the wall time of its steps), and the series rules that watch a series judge each value
// once, restarts handled as TensorBoard handles them (SeriesEvaluator). A replay reads jobs in
// parallel on `config.threads` threads: a job is a run, or the runs named for modes under one
// folder (Keras' train/ and validation/), read together on one thread, training runs first, so
// that rules pairing a job's series (Overfit) see them in order. Each run sends its events in
// its own file order as it finds them (the events of runs read at the same time interleave; a
// run's own never do). A watch of a local folder reads each file its source announces, new or
// grown (inotify through the format's file filter; a rescan as the safety net); on S3 it lists
// the prefix every `config.poll_interval`. It sends events as they are found, and asks rules
// about silence (StalledTrainingRule, MaxInitializationTime) when nothing new came for their
// threshold.
//
// What rules find goes to the job's RuleLedger, as on an smdebug job: events to the sinks (a
// sink that throws is reported, not fatal), stop actions (a rule's own, or
// config.default_stop_actions for one that asks to stop training) the first time it fires, and
// the statuses. Rules without a series form (those that read smdebug tensors) end in Error
// saying so; a rule that found no series it watches ends in Error naming what it looked for,
// never in NoIssuesFound; so does every rule that did not fire when values the logdir holds
// could not be read (a corrupt record ends its file, as in TensorBoard).

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/model/memory_budget.hpp"
#include "core/model/rule_event.hpp"
#include "core/model/storage.hpp"
#include "engine/graph/job_outcome.hpp"
#include "engine/graph/pipeline_config.hpp"
#include "engine/graph/rule_ledger.hpp"
#include "engine/graph/sink_routing.hpp"
#include "rules/rule_registry.hpp"
#include "rules/series_rule.hpp"
#include "sinks/sink.hpp"
#include "stages/series/run_loader.hpp"
#include "stages/series/series_format.hpp"
#include "stages/series/series_naming.hpp"
#include "stages/series/series_reader.hpp"
#include "stages/series/series_store.hpp"
#include "stages/tensorboard/logdir_runs.hpp"

namespace rulestream {

// What every job reports (JobOutcome; its problems name the file, relative to the logdir), and
// what a logdir's reading counts besides. `interrupted`: a replay stopped before it read every
// run.
struct SeriesReport : JobOutcome {
  std::size_t runs = 0;
  std::size_t files = 0;
  std::uint64_t bytes = 0;    // of event files, as listed
  std::int64_t values = 0;    // scalar and histogram values read
  std::int64_t restarts = 0;  // times a series went back to an earlier step
};

class SeriesPipeline {
 public:
  // config.paths.front() is the logdir. RuleConfigError for a bad rule configuration (a rule
  // asking to stop training with no stop action to run among them).
  SeriesPipeline(PipelineConfig config, std::vector<std::unique_ptr<Sink>> sinks,
                 SeriesNaming naming = SeriesNaming::defaults(),
                 const RuleRegistry& registry = RuleRegistry::builtin(),
                 const SeriesFormat& format = tensorboard_series_format());
  ~SeriesPipeline();

  // Reads the logdir to its end (replay) or until request_stop (watch), sends every rule's
  // status to the sinks, and reports. Call once.
  SeriesReport run();

  // From any thread: a watch stops after its current poll; a replay reads no further run.
  void request_stop();

  // Every value read is also kept in `store` (as TensorBoard shows it), every run listed (call
  // before run(); the store outlives it). Runs read at the same time feed it from their
  // threads, each its own RunSeries.
  void keep_series(SeriesStore& store) { store_ = &store; }

  // Where a watch says, once, after its first look at the logdir, which rules have nothing to
  // judge there yet and what they look for (call before run()).
  void on_notice(std::function<void(const std::string&)> notice) { notice_ = std::move(notice); }

  // Values, the listed bytes of event files and the highest step of any run (JobProgress): a
  // watch's after each poll that could list the logdir, a replay's once it has read it.
  const JobProgress& progress() const { return progress_; }

 private:
  class RunState;

  void replay(const Storage& storage, SeriesReport& report);
  // A watch: a local logdir through its source's announcements (follow_announced), anything
  // else (S3) by listing it at every poll (follow_by_listing).
  void follow(const std::shared_ptr<const Storage>& storage, SeriesReport& report);
  // Event files are read as the source announces them, new or grown (inotify, a rescan as the
  // safety net), on the calling thread: no listing at a steady poll.
  void follow_announced(const std::shared_ptr<const Storage>& storage, SeriesReport& report);
  void follow_by_listing(const Storage& storage, SeriesReport& report);
  // The run of that name, made at its first file. On the watch's thread.
  RunState& run_named(const std::string& run);
  // What `file` gained since it was last read, judged and sent. On the watch's thread.
  void read_followed(const Storage& storage, const StoredObject& file, RunState& state);
  // After a look (a listing, an announcement, a tick): the report's files and bytes, progress,
  // the first notice, and rules about silence.
  void take_stock(std::size_t files, std::uint64_t bytes, SeriesReport& report);
  // For a watch, after each poll: rules about silence (StalledTrainingRule) fire once a silence
  // passes their threshold (`values`: how many values the runs hold now).
  void check_silence(std::int64_t values);
  // Hands the run's conditions met since the last call to the ledger, and forgets them. The
  // caller owns the run's findings (its reading thread, or any thread once the run is
  // finished), and calls for different runs one at a time (the ledger's contract: a rule's
  // findings come from one thread at a time).
  void dispatch(RunState& run);
  void finish(SeriesReport& report);
  // How event files are read: no record larger than the memory budget, and windows grown for
  // large records within the job's budget, shared by the runs read at once.
  SeriesReadOptions read_options() {
    return {.max_record_bytes = config_.max_memory, .budget = &budget_};
  }
  // What the runs' problems say was not read (values_lost), for every rule's status; empty when
  // every value written whole was read.
  std::string values_not_read() const;
  // Values each rule judged so far, by rule.
  std::vector<std::int64_t> evaluations() const;
  void notice_idle_rules();

  PipelineConfig config_;
  const SeriesFormat& format_;
  MemoryBudget budget_;  // the job's --max-memory: what reading holds beyond its windows
  std::vector<std::unique_ptr<Sink>> sinks_;
  SeriesNaming naming_;
  std::vector<std::shared_ptr<const SeriesRule>> rules_;  // null: no series form
  std::unique_ptr<SinkRouting> routing_;
  std::mutex problems_mutex_;
  // What the ledger reported (a sink that threw, a stop action that failed), any thread.
  std::vector<TrialProblem> ledger_problems_;
  std::vector<std::unique_ptr<RunState>> runs_;
  std::map<std::string, RunState*> runs_by_name_;  // a watch's runs, by name
  bool noticed_ = false;  // the rules with nothing to judge were said (after the first look)
  std::string logdir_;
  SeriesStore* store_ = nullptr;  // keep_series

  std::function<void(const std::string&)> notice_;
  JobProgress progress_;
  struct Silence {
    std::int64_t values = -1;  // the runs' values at the last poll that found new ones
    std::chrono::steady_clock::time_point since = std::chrono::steady_clock::now();
    std::vector<bool> reported;  // by rule: this silence was reported
  } silence_;

  std::mutex stop_mutex_;  // guards following_, and the wait of a watch by listing
  std::condition_variable stop_wake_;
  std::atomic<bool> stop_{false};
  // The io_context a watch of a local logdir runs while it runs; stopped by request_stop.
  boost::asio::io_context* following_ = nullptr;
  // Last: destroyed first, while what it reports problems to is still there.
  std::unique_ptr<RuleLedger> ledger_;
};

}  // namespace rulestream
