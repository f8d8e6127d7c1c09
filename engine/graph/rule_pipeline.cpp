#include "engine/graph/rule_pipeline.hpp"

#include <tbb/flow_graph.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <iostream>
#include <limits>
#include <mutex>
#include <set>
#include <thread>
#include <variant>

#include "core/model/busy_timer.hpp"
#include "core/model/exceptions.hpp"
#include "core/model/human_bytes.hpp"
#include "core/model/memory_budget.hpp"
#include "core/model/trial_layout.hpp"
#include "engine/graph/configuration_check.hpp"
#include "engine/graph/file_tracker.hpp"
#include "engine/graph/retired_landings.hpp"
#include "engine/graph/rule_runner.hpp"
#include "engine/graph/rule_stage.hpp"
#include "engine/graph/sink_routing.hpp"
#include "sources/open/storage_factory.hpp"
#include "sources/open/trial_source_factory.hpp"
#include "stages/assemble/step_assembler.hpp"
#include "stages/load/decode_selection.hpp"
#include "stages/load/event_file_loader.hpp"
#include "stages/load/index_loader.hpp"
#include "trial/store/trial_store.hpp"

namespace rulestream {
namespace {

namespace flow = tbb::flow;

// Whether the calling arena gets a thread besides the calling one: it asks for two or more, and
// oneTBB allows as many (a process held to one CPU gets no worker, whatever its arena asks).
bool arena_has_workers() {
  return tbb::this_task_arena::max_concurrency() >= 2 &&
         tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism) >= 2;
}

struct Tick {};
struct EndOfJob {};
// A landing travels by pointer: the flow graph copies what it buffers, and a landing holds a
// name per tensor (a copy of each was 4% of a small-tensor replay's instructions).
using LandingPtr = std::shared_ptr<const IndexLanding>;
using AssemblerInput = std::variant<LandingPtr, Tick, EndOfJob>;

// How long a watch whose job has its end marker but no index file yet waits for one: a job
// copied whole may get its marker first, and its events folder (the bulk of it) before its
// index files.
constexpr std::chrono::seconds kSettleForAnEmptyJob{30};

std::vector<RequiredTensors> required_by(const std::vector<std::unique_ptr<RuleRunner>>& runners) {
  std::vector<RequiredTensors> required;
  for (const auto& runner : runners) required.push_back(runner->rule().required_tensors());
  return required;
}

// Values the loader decodes for rules go to the store's value cache.
class StoreValueKeeper final : public DecodedValueKeeper {
 public:
  explicit StoreValueKeeper(TrialStore& store) : store_(store) {}
  std::uint32_t file_number(const std::string& file) override {
    return store_.cache().file_id(file);
  }
  void keep(std::uint32_t file_number, std::uint64_t start, const TensorValue& value) override {
    store_.cache().put_value({file_number, start}, value);
  }

 private:
  TrialStore& store_;
};

}  // namespace

class RulePipeline::Impl {
 public:
  Impl(PipelineConfig config, std::vector<std::unique_ptr<Sink>> sinks,
       const RuleRegistry& registry)
      : config_(std::move(config)), sinks_(std::move(sinks)), assembler_(config_.worker_grace) {
    // Nothing is read before the configuration is known to be good.
    check_configuration(config_, sink_labels(), registry);
    storage_ = open_storage(config_.paths.front(), config_.storage);
    if (!storage_->root_exists()) {
      throw StorageError(storage_->describe() + ": no such trial folder");
    }
    TrialOptions options;
    options.name = trial_name_for(config_.paths.front());
    options.auto_refresh = false;
    options.check_data_crc = config_.check_data_crc;
    // Every trial's caches and every inflation, the loader's included, share --max-memory;
    // each trial's values may take their share of it.
    options.memory_budget = memory_;
    options.value_cache_bytes = config_.max_memory / config_.paths.size();
    options.end_of_job_grace = config_.end_of_job_grace;
    store_ = std::make_shared<TrialStore>(storage_, options);
    store_->set_externally_fed();
    base_.emplace(Trial::from_store(store_));
    for (std::size_t i = 1; i < config_.paths.size(); ++i) {
      TrialOptions other;
      other.name = trial_name_for(config_.paths[i]);
      other.check_data_crc = config_.check_data_crc;
      other.value_cache_bytes = options.value_cache_bytes;
      other.memory_budget = memory_;
      // Loaded when the run starts, while the first trial streams (run()).
      others_.push_back(
          Trial::open_deferred(open_storage(config_.paths[i], config_.storage), other));
    }
    // Each rule instance's handles count apart: instances run in parallel, and every Tensor one
    // makes copies its handle (one shared counter was 3% of an all-rules replay).
    const auto own_context = [this] {
      std::vector<Trial> others;
      for (const Trial& other : others_) others.push_back(other.separately_counted());
      return RuleContext{base_->separately_counted(), std::move(others)};
    };
    std::vector<LedgerRule> ledger_rules;
    for (const auto& rule_config : config_.rules) {
      ConfiguredRule configured =
          configure_rule(rule_config, own_context(), config_.default_stop_actions, registry);
      ledger_rules.push_back({.configuration_name = configured.config.configuration_name,
                              .rule = std::string(configured.rule->name()),
                              .stop_actions = configured.stop_actions,
                              .only_where_applicable = rule_config.only_where_applicable,
                              .incidents = rule_config.incidents,
                              .clears_itself = configured.rule->clears_itself()});
      // A rule that judges each step on its own evaluates as many steps at once as there are
      // threads, each on an instance of its own (RuleStage).
      std::vector<std::unique_ptr<Rule>> replicas;
      const Rule& rule = *configured.rule;
      if (rule.evaluates_steps_independently() && !rule.check_interval()) {
        for (std::size_t i = 1; i < parallelism(); ++i) {
          replicas.push_back(
              registry.create(rule_config.rule, own_context(), rule_config.parameters));
        }
      }
      // A rule that keeps state but reads each step on its own reads as many steps at once as
      // there are threads, and judges them in order on its own node (RuleStage).
      const bool reads_ahead = replicas.empty() && rule.reads_ahead() && !rule.check_interval();
      runners_.push_back(
          std::make_unique<RuleRunner>(runners_.size(), std::move(configured), runner_context_));
      runners_.back()->add_replicas(std::move(replicas));
      if (reads_ahead) runners_.back()->allow_reading_ahead(parallelism());
    }
    routing_ = std::make_unique<SinkRouting>(configured_rules(), sink_labels());
    ledger_ = std::make_unique<RuleLedger>(std::move(ledger_rules), sinks_, *routing_,
                                           [this](std::string path, std::string message) {
                                             report_problem(std::move(path), std::move(message));
                                           });
    ledger_->name_trial(base_->name());
    runner_context_ =
        RuleRunnerContext{.base = &*base_,
                          .ledger = ledger_.get(),
                          .report_problem =
                              [this](std::string path, std::string message) {
                                report_problem(std::move(path), std::move(message));
                              },
                          .in_range = [this](std::int64_t step) { return in_range(step); },
                          .end_marker_seen = &end_marker_seen_};
    selection_ = std::make_unique<DecodeSelection>(required_by(runners_));
    keeper_ = std::make_unique<StoreValueKeeper>(*store_);
    loader_body_ = std::make_unique<EventFileLoader>(
        storage_, store_->record_arena(), config_.check_data_crc, memory_,
        [this](std::string path, std::string message) {
          report_problem(std::move(path), std::move(message));
        },
        LoadCounters{.event_bytes = &progress_.event_bytes,
                     .tensors_decoded = &progress_.tensors_decoded});
  }

  PipelineReport run();
  // How many threads the run's work uses: config_.threads, or every core the process may use,
  // and never more than oneTBB will give (the cores, or a global_control's limit: oneTBB warns
  // on stderr when an arena asks for more).
  std::size_t parallelism() const {
    const auto most =
        tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
    return config_.threads > 0 ? std::min(static_cast<std::size_t>(config_.threads), most) : most;
  }

  void request_stop() {
    stop_requested_ = true;
    boost::asio::post(io_, [this] { finish_following(); });
  }

  const JobProgress& progress() const { return progress_; }
  Trial base_trial() const { return *base_; }

 private:
  using Loader = flow::multifunction_node<TrialFile, std::tuple<AssemblerInput>>;
  using Assembler = flow::multifunction_node<AssemblerInput, std::tuple<RuleMessage>>;

  // Hands a file to the loader once (FileTracker). `seen_at`: when a live pipeline saw the file
  // (nullopt: its modification time tells when it arrived), which becomes its step's arrival.
  void announce(Loader& loader, TrialFile file,
                std::optional<std::chrono::system_clock::time_point> seen_at = std::nullopt);
  // Tells the store how many steps the initial scan found (it sizes tensor histories by it).
  void expect_steps(const std::vector<TrialFile>& files);
  void load(const TrialFile& file, Loader::output_ports_type& ports);
  void load_collections(const TrialFile& file);
  // Decodes and reduces the records of the landing's event file that the rules use.
  void decode(IndexLanding& landing);
  void assemble(const AssemblerInput& input, Assembler::output_ports_type& ports);
  void release(Assembler::output_ports_type& ports);
  std::vector<RuleConfig> configured_rules() const;
  std::vector<SinkLabel> sink_labels() const;
  void start_time_checks(std::vector<std::unique_ptr<RuleStage>>& stages);
  void schedule_time_check(boost::asio::steady_timer& timer, std::chrono::milliseconds interval,
                           RuleRunner& runner, RuleStage& stage);
  void report_problem(std::string path, std::string message);
  void finish_following();
  // After the end marker: ends the watch once the job has settled (on io_'s thread).
  struct IndexFilesOnDisk {
    std::int64_t count = 0;  // -1: the listing failed
    std::uint64_t bytes = 0;
    friend bool operator==(const IndexFilesOnDisk&, const IndexFilesOnDisk&) = default;
  };
  IndexFilesOnDisk index_files_on_disk() const;
  void settle_after_end_marker(IndexFilesOnDisk before);
  void rescan_into(Loader& loader);
  // Runs io_ (the source, its timers) on a thread of its own until following ends, while the
  // calling thread works in the graph's arena. Rethrows what io_.run() threw.
  void follow_beside(flow::graph& graph);
  void follow_source(flow::graph& graph, Loader& loader, Assembler& assembler,
                     std::vector<std::unique_ptr<RuleStage>>& rule_stages);
  // run()'s work, inside the arena of config_.threads.
  PipelineReport run_in_arena();
  bool in_range(std::int64_t step) const {
    return (!config_.start_step || step >= *config_.start_step) &&
           (!config_.end_step || step < *config_.end_step);
  }

  PipelineConfig config_;
  std::vector<std::unique_ptr<Sink>> sinks_;
  std::shared_ptr<const Storage> storage_;
  // The job's one budget (--max-memory): the trials' caches and every inflation draw on it.
  std::shared_ptr<MemoryBudget> memory_ = std::make_shared<MemoryBudget>(config_.max_memory);
  std::shared_ptr<TrialStore> store_;
  std::optional<Trial> base_;
  std::vector<Trial> others_;
  std::vector<std::unique_ptr<RuleRunner>> runners_;
  std::unique_ptr<SinkRouting> routing_;
  std::unique_ptr<DecodeSelection> selection_;
  std::unique_ptr<StoreValueKeeper> keeper_;
  std::unique_ptr<EventFileLoader> loader_body_;
  StepAssembler assembler_;
  JobProgress progress_;

  std::mutex problems_mutex_;
  std::vector<TrialProblem> problems_;
  // After what its failures are reported to: destroyed (no more reports) before them.
  std::unique_ptr<RuleLedger> ledger_;
  // What every runner shares; filled in the constructor once the sink routing is known, before
  // any runner runs.
  RuleRunnerContext runner_context_;
  FileTracker files_;
  RetiredLandings retired_;  // freed by the loaders, off the assembler's serial node
  std::mutex collections_mutex_;

  boost::asio::io_context io_;
  std::unique_ptr<TrialSource> watcher_;
  std::unique_ptr<boost::asio::steady_timer> end_timer_;
  std::chrono::steady_clock::time_point end_marker_at_;  // on io_'s thread
  std::unique_ptr<boost::asio::steady_timer> tick_timer_;
  std::vector<std::unique_ptr<boost::asio::steady_timer>> time_check_timers_;
  Loader* loader_ = nullptr;
  std::int64_t incomplete_steps_ = 0;          // touched by the serial assembler only
  std::chrono::nanoseconds assembler_busy_{};  // likewise: its body's CPU time
  bool job_ended_ = false;                     // likewise
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> end_marker_seen_{false};
  std::atomic<bool> end_marker_first_{false};  // seen before any index file
  // Set on the calling thread before following, cleared on the follower's (finish_following),
  // read by the loaders.
  std::atomic<bool> following_{false};
};

void RulePipeline::Impl::report_problem(std::string path, std::string message) {
  std::lock_guard lock(problems_mutex_);
  std::cerr << "rulestream: " << message << "\n";
  problems_.push_back({std::move(path), std::move(message)});
}

void RulePipeline::Impl::announce(Loader& loader, TrialFile file,
                                  std::optional<std::chrono::system_clock::time_point> seen_at) {
  if (!files_.first_sight(file, seen_at)) return;
  // Collections files are read here, as they are found, not by the loader: rules select tensors
  // by collection, and an index file decoded before the collections are known would have every
  // tensor decoded (a rule over `losses` would read the gradients too). They are small, and
  // sources announce them before index files (path order). The loader still sees the file, to
  // let the steps held for the collections go.
  if (file.kind == TrialFile::Kind::Collections) load_collections(file);
  loader.try_put(std::move(file));
}

void RulePipeline::Impl::expect_steps(const std::vector<TrialFile>& files) {
  std::set<std::int64_t> steps;
  for (const TrialFile& file : files) {
    if (file.kind != TrialFile::Kind::Index) continue;
    if (const auto name = parse_step_file_name(file.path)) steps.insert(name->step);
  }
  store_->expect_steps(steps.size());
}

void RulePipeline::Impl::load(const TrialFile& file, Loader::output_ports_type& ports) {
  retired_.free_unheld();
  switch (file.kind) {
    case TrialFile::Kind::Collections:
      // Read when announced (announce()). Steps held while the collections loaded may go now;
      // without a nudge they would wait for the next file to land.
      std::get<0>(ports).try_put(AssemblerInput(Tick{}));
      return;
    case TrialFile::Kind::EndMarker:
      // Before any index file: a finished job being copied, whose files land in no particular
      // step order (cp copies in directory order): its steps wait until it has settled.
      if (progress_.index_files_seen.load() == 0) end_marker_first_ = true;
      end_marker_seen_ = true;
      if (following_) {
        boost::asio::post(io_, [this] {
          end_marker_at_ = std::chrono::steady_clock::now();
          settle_after_end_marker(index_files_on_disk());
        });
      }
      return;
    case TrialFile::Kind::EventFile:  // an smdebug trial's filter never announces these
    case TrialFile::Kind::MetricsFile:
      return;
    case TrialFile::Kind::Index:
      break;
  }
  const auto name = parse_step_file_name(file.path);
  if (!name) return;
  if (files_.skipped_after_stop(name->step, stop_requested_ && !config_.follow)) {
    files_.landed_or_dropped(name->step);
    std::get<0>(ports).try_put(AssemblerInput(Tick{}));
    return;
  }
  if (file.path.ends_with(".json")) progress_.index_files_seen++;
  IndexFileLoad load = load_index_file(*storage_, file.path, *name, files_.arrival_of(file));
  if (load.landing && in_range(load.landing->step)) {
    try {
      decode(*load.landing);
    } catch (const RulestreamError& error) {  // a collection's regex that does not compile
      load.problem = TrialProblem{storage_->describe() + "/" + file.path, error.what()};
      load.landing.reset();
    }
  }
  if (!load.landing) {
    report_problem(load.problem->path, load.problem->message);
    files_.landed_or_dropped(name->step);
    std::get<0>(ports).try_put(AssemblerInput(Tick{}));  // it held later steps: re-check them
    return;
  }
  IndexLanding& landing = *load.landing;
  progress_.index_files++;
  std::get<0>(ports).try_put(
      AssemblerInput(std::make_shared<const IndexLanding>(std::move(landing))));
}

void RulePipeline::Impl::load_collections(const TrialFile& file) {
  struct Done {
    Impl& impl;
    ~Done() { impl.files_.landed_or_dropped(FileTracker::kCollectionsInFlight); }
  } done{*this};
  const auto worker = parse_collections_worker(file.path);
  if (!worker) return;
  std::lock_guard lock(collections_mutex_);
  const bool define = !store_->latest_collections();
  CollectionsFileLoad load = load_collections_file(*storage_, file.path, *worker, define);
  for (TrialProblem& problem : load.problems) {
    report_problem(std::move(problem.path), std::move(problem.message));
  }
  store_->ingest({}, std::move(load.landing), {}, false, false);
}

void RulePipeline::Impl::decode(IndexLanding& landing) {
  // Which rules still read whole values: a rule may stop part-way (Rule::done_reading_values).
  std::vector<bool> reading;
  for (const auto& runner : runners_) reading.push_back(runner->rule().reads_values());
  const auto uses = selection_->uses(landing.index.tensors, store_->latest_collections(), reading);
  landing.reductions = loader_body_->load(landing.index, uses, *keeper_);
}

void RulePipeline::Impl::assemble(const AssemblerInput& input,
                                  Assembler::output_ports_type& ports) {
  const auto now = StepAssembler::Clock::now();
  if (const auto* landing = std::get_if<LandingPtr>(&input)) {
    store_->ingest(**landing);
    assembler_.landed((*landing)->step, (*landing)->worker, now);
    files_.landed_or_dropped((*landing)->step);
    retired_.retire(*landing);
  } else if (std::holds_alternative<EndOfJob>(input)) {
    assembler_.end_of_job();
    job_ended_ = true;
    store_->ingest({}, {}, {}, end_marker_seen_, true);
  }
  release(ports);
}

void RulePipeline::Impl::release(Assembler::output_ports_type& ports) {
  // The worker count comes from the collections files, which may land after a step's first
  // index file: take it afresh each time, or a step could leave with one worker of two.
  assembler_.set_num_workers(store_->status(store_->generation()).num_workers);
  std::optional<std::int64_t> held = files_.lowest_in_flight();
  // Until a collections file says how many workers the job has, a step with one worker's files
  // may still be waiting for another's: hold everything (smdebug waits for the collections
  // too), unless the job ended or a grace period lets silent workers go.
  if (!job_ended_ && config_.worker_grace.count() == 0 &&
      !store_->collections(store_->generation())) {
    held = std::numeric_limits<std::int64_t>::min();
  }
  // A job whose end marker came first is read as a replay is: in step order once it settled,
  // not step by step as files land (a step landing after a later one was released is lost).
  if (!job_ended_ && end_marker_first_) held = std::numeric_limits<std::int64_t>::min();
  for (const auto& ready : assembler_.take_ready(StepAssembler::Clock::now(), held)) {
    // Rules wait for their step through the trial: tell it this one may be looked at.
    store_->release_through(ready.step);
    StepReady message;
    message.step = ready.step;
    message.mode = base_->mode(ready.step).value_or(Mode::Global);
    message.mode_step = base_->mode_step(ready.step).value_or(ready.step);
    message.incomplete = ready.incomplete;
    message.sequence = static_cast<std::size_t>(progress_.steps_released++);
    progress_.last_step = ready.step;
    if (ready.incomplete) incomplete_steps_++;
    std::get<0>(ports).try_put(message);
  }
}

std::vector<RuleConfig> RulePipeline::Impl::configured_rules() const {
  std::vector<RuleConfig> rules;
  for (const auto& runner : runners_) rules.push_back(runner->config());
  return rules;
}

// sinks_[i] was built from config_.sinks[i] when the configuration lists sinks; sinks built by
// hand are known by their description.
std::vector<SinkLabel> RulePipeline::Impl::sink_labels() const {
  std::vector<SinkLabel> labels;
  for (std::size_t i = 0; i < sinks_.size(); ++i) {
    labels.push_back(i < config_.sinks.size() ? label_of(config_.sinks[i])
                                              : label_of(sinks_[i]->describe()));
  }
  return labels;
}

// --- Time checks: rules that watch the clock, while following ----------------------------------

void RulePipeline::Impl::start_time_checks(std::vector<std::unique_ptr<RuleStage>>& stages) {
  for (std::size_t i = 0; i < runners_.size(); ++i) {
    const auto interval = runners_[i]->rule().check_interval();
    if (!interval) continue;
    auto& timer =
        *time_check_timers_.emplace_back(std::make_unique<boost::asio::steady_timer>(io_));
    schedule_time_check(timer, std::max(*interval, std::chrono::milliseconds(1)), *runners_[i],
                        *stages[i]);
  }
}

void RulePipeline::Impl::schedule_time_check(boost::asio::steady_timer& timer,
                                             std::chrono::milliseconds interval, RuleRunner& runner,
                                             RuleStage& stage) {
  timer.expires_after(interval);
  timer.async_wait(
      [this, &timer, interval, &runner, &stage](const boost::system::error_code& error) {
        if (error || !following_) return;
        // Past --end-step the rule is done with this job: no alarms about what comes after.
        const bool past_end = config_.end_step && progress_.last_step >= *config_.end_step - 1;
        if (!past_end && runner.claim_time_check()) stage.input().try_put(RuleMessage(TimeCheck{}));
        schedule_time_check(timer, interval, runner, stage);
      });
}

// The end marker means "read what is there, and what lands while the job settles": a job
// copied whole (cp -r, cp -a, rsync) may get its marker before its index files. The watch ends
// once a grace passes in which the index files on disk did not change (their count and bytes:
// what the source announces may come later than what lands, a file written in place once it is
// seen whole); a job with none yet is given kSettleForAnEmptyJob, not one grace, before it ends
// as a job with nothing read. finish_following() then announces what is there.
RulePipeline::Impl::IndexFilesOnDisk RulePipeline::Impl::index_files_on_disk() const {
  IndexFilesOnDisk on_disk;
  try {
    for (const auto& object : storage_->list(kIndexDir)) {
      ++on_disk.count;
      on_disk.bytes += object.size;
    }
  } catch (const StorageError&) {
    on_disk.count = -1;  // a listing refused now: not settled, look again
  }
  return on_disk;
}

void RulePipeline::Impl::settle_after_end_marker(IndexFilesOnDisk before) {
  end_timer_ = std::make_unique<boost::asio::steady_timer>(io_, config_.end_of_job_grace);
  end_timer_->async_wait([this, before](const boost::system::error_code& error) {
    if (error) return;
    const IndexFilesOnDisk now = index_files_on_disk();
    // A listing that fails, or finds nothing yet, is looked at again for kSettleForAnEmptyJob at
    // most: storage that stays away must not keep the watch for ever.
    const bool within_settle =
        std::chrono::steady_clock::now() - end_marker_at_ < kSettleForAnEmptyJob;
    const bool still_landing = now.count >= 0 && now != before;
    const bool nothing_yet = now.count <= 0 && within_settle;
    if (still_landing || nothing_yet) {
      settle_after_end_marker(now);
      return;
    }
    finish_following();
  });
}

void RulePipeline::Impl::finish_following() {
  if (!following_) return;
  following_ = false;
  if (watcher_) watcher_->stop();
  if (end_timer_) end_timer_->cancel();
  if (tick_timer_) tick_timer_->cancel();
  for (const auto& timer : time_check_timers_) timer->cancel();
  // inotify may have missed nothing, but files that landed during the grace period are
  // picked up here for certain.
  if (loader_ != nullptr && !stop_requested_) rescan_into(*loader_);
  io_.stop();
}

void RulePipeline::Impl::rescan_into(Loader& loader) {
  for (const std::string_view prefix : {kCollectionsDir, kIndexDir}) {
    for (const auto& object : storage_->list(prefix)) {
      const auto kind = trial_file_kind(object.path);
      if (!kind) continue;
      announce(loader, TrialFile{*kind, object.path, object.size, object.modified_ns},
               std::chrono::system_clock::now());
    }
  }
}

// Starts the source and runs the io_context: the whole job for a replay (the initial scan),
// until the end marker's grace or a stop for a watch. Throws what the source throws.
void RulePipeline::Impl::follow_beside(flow::graph& graph) {
  // The source is followed on a thread of its own, not on one of the run's: with one thread
  // (--threads 1, or a container held to one CPU, where oneTBB gives no worker) following on
  // it left none to decode or evaluate, and a watch never ended. The graph is kept waiting
  // (reserve_wait) until following ends, so this thread works in the arena meanwhile, on what
  // the follower's callbacks put into the graph.
  std::exception_ptr failure;
  graph.reserve_wait();
  std::jthread follower([this, &graph, &failure] {
    try {
      io_.run();
    } catch (...) {  // nothing may leave a thread: the caller rethrows it
      failure = std::current_exception();
    }
    graph.release_wait();
  });
  try {
    graph.wait_for_all();
  } catch (...) {  // node bodies throw nothing; should the graph fail anyway, end following
    boost::asio::post(io_, [this] { finish_following(); });
    io_.stop();
    follower.join();
    throw;
  }
  follower.join();
  if (failure) std::rethrow_exception(failure);
}

void RulePipeline::Impl::follow_source(flow::graph& graph, Loader& loader, Assembler& assembler,
                                       std::vector<std::unique_ptr<RuleStage>>& rule_stages) {
  // Files already there when watching began (the source's first batch, its initial scan)
  // arrived when they were written; later ones when the pipeline saw them.
  watcher_ =
      make_trial_source(io_, storage_,
                        TrialSourceOptions{.follow = following_,
                                           .poll_interval = config_.poll_interval,
                                           .inotify_hub = config_.inotify_hub},
                        [this, &loader, initial = true](std::vector<TrialFile> files) mutable {
                          std::optional<std::chrono::system_clock::time_point> seen_at;
                          if (following_ && !initial) seen_at = std::chrono::system_clock::now();
                          if (initial) expect_steps(files);
                          initial = false;
                          for (auto& file : files) announce(loader, std::move(file), seen_at);
                        });
  watcher_->start();
  if (following_) {
    if (config_.worker_grace.count() > 0) {
      tick_timer_ = std::make_unique<boost::asio::steady_timer>(io_);
      // The pending wait owns the tick; the tick only refers to itself weakly (owning itself
      // would be a cycle that leaks it).
      auto tick = std::make_shared<std::function<void()>>();
      *tick = [this, &assembler, weak = std::weak_ptr(tick)] {
        tick_timer_->expires_after(std::min(config_.worker_grace / 4 + std::chrono::milliseconds(1),
                                            std::chrono::milliseconds(250)));
        tick_timer_->async_wait(
            [&assembler, self = weak.lock()](const boost::system::error_code& error) {
              if (error) return;
              assembler.try_put(AssemblerInput(Tick{}));
              (*self)();
            });
      };
      (*tick)();
    }
    start_time_checks(rule_stages);
    // With workers, the calling thread follows (it sleeps in the source's waits) and they
    // evaluate. Following beside would leave the calling thread waiting in the graph, where
    // oneTBB's waiters spin and yield: one instance's 1,000 live jobs took a core that way
    // (benchmarks/RESULTS.md, serve_live_e2e). With no worker, following must leave the one
    // thread to the graph: beside it.
    if (arena_has_workers()) {
      io_.run();
    } else {
      follow_beside(graph);
    }
  } else {
    io_.run();  // the initial scan
  }
}

PipelineReport RulePipeline::Impl::run() {
  // The run's work uses parallelism() threads: the flow graph is made in this arena and runs
  // its tasks there (the trials rules compare with load beside it, in an arena of their own of
  // the same size: run_in_arena()). The calling thread takes the arena's reserved slot and
  // works while it waits for the graph; a watch follows its source on it while the others
  // evaluate, or, with no other, on a thread of its own beside them (follow_beside).
  tbb::task_arena arena(static_cast<int>(parallelism()));
  return arena.execute([&] { return run_in_arena(); });
}

PipelineReport RulePipeline::Impl::run_in_arena() {
  flow::graph graph;
  const std::size_t decoders = std::max<std::size_t>(2, parallelism());
  // Nothing a node body throws may leave it: TBB would cancel the graph and rethrow from
  // wait_for_all, with landings lost and steps held. What is not a RulestreamError (handled
  // where it is thrown) is reported here, and the file's step let go.
  Loader loader(graph, decoders, [this](const TrialFile& file, Loader::output_ports_type& ports) {
    try {
      load(file, ports);
    } catch (const std::exception& error) {
      report_problem(file.path, storage_->describe() + "/" + file.path + ": " + error.what());
      if (const auto name = parse_step_file_name(file.path)) files_.landed_or_dropped(name->step);
      std::get<0>(ports).try_put(AssemblerInput(Tick{}));
    }
  });
  // Assembling and evaluating go before decoding more files: when rules lag behind the decoders,
  // the values decoded for them are evicted before they are read (max_memory) and every rule
  // reads them again from disk. Priorities only order ready tasks; they change no result.
  constexpr flow::node_priority_t kDownstreamFirst = 1;
  Assembler assembler(
      graph, flow::serial,
      [this](const AssemblerInput& input, Assembler::output_ports_type& ports) {
        // The store spreads a large file's ingestion over the arena's threads: what this
        // thread did of that is parallel work, not the node's own.
        const auto parallel_before = store_->parallel_ingest_cpu();
        {
          BusyTimer busy(assembler_busy_);
          try {
            assemble(input, ports);
          } catch (const std::exception& error) {
            const auto* landing = std::get_if<LandingPtr>(&input);
            report_problem(landing ? (*landing)->path : "",
                           std::string("assembling steps: ") + error.what());
            if (landing) files_.landed_or_dropped((*landing)->step);
          }
        }
        assembler_busy_ -= store_->parallel_ingest_cpu() - parallel_before;
      },
      kDownstreamFirst);
  flow::make_edge(flow::output_port<0>(loader), assembler);
  std::vector<std::unique_ptr<RuleStage>> rule_stages;
  for (auto& runner : runners_) {
    // A rule that compares with other trials gets its steps once they are loaded (below).
    const bool held = !others_.empty() && runner->rule().compares_with_other_trials();
    rule_stages.push_back(std::make_unique<RuleStage>(graph, *runner, kDownstreamFirst, held));
    flow::make_edge(flow::output_port<0>(assembler), rule_stages.back()->input());
  }
  // The trials rules compare with are loaded beside the pipeline rather than before it: opening
  // one is a listing and a parse of every index file (0.45 s for the 300-step benchmark job),
  // which the first trial's decoding and its other rules need not wait for. The rules that
  // compare with them get their steps when the loads are done (RuleStage's `held`), not before:
  // a rule that asked sooner would wait for the load (TrialStore::refresh holds its refresh
  // lock) on one of the pipeline's threads, and every thread could end up waiting so.
  //
  // They load in an arena of their own, of the pipeline's size, on their own thread: with one
  // thread, the pipeline's would otherwise do the whole load before anything else. A load that
  // fails is a problem of the run's; the rules then ask the trial themselves and say what they
  // find. Declared after the stages: it ends (joined) before they go.
  std::jthread load_others([this, &rule_stages] {
    // However the loads end: the run cannot finish while a stage holds steps.
    struct LetThrough {
      std::vector<std::unique_ptr<RuleStage>>& stages;
      ~LetThrough() {
        for (const auto& stage : stages) stage->let_through();
      }
    } let_through{rule_stages};
    try {
      tbb::task_arena loading(static_cast<int>(parallelism()));
      for (const Trial& other : others_) {
        try {
          loading.execute([&] { other.load(); });
        } catch (const std::exception& error) {
          report_problem(other.path(), error.what());
        }
      }
    } catch (...) {  // nothing may leave a thread
      report_problem("", "loading the trials to compare with failed");
    }
  });
  loader_ = &loader;

  following_ = config_.follow && !stop_requested_;
  // A source that fails (a listing refused, storage gone) ends the reading, not the process:
  // what was read is drained and evaluated, and every rule that did not fire says the job
  // could not be read to the end.
  std::string source_failure;
  try {
    follow_source(graph, loader, assembler, rule_stages);
  } catch (const std::exception& error) {
    source_failure = error.what();  // storage's errors name the trial's place
    report_problem("", "reading the job failed: " + source_failure);
    following_ = false;
    if (watcher_) watcher_->stop();
    if (end_timer_) end_timer_->cancel();
    if (tick_timer_) tick_timer_->cancel();
    for (const auto& timer : time_check_timers_) timer->cancel();
  }
  graph.wait_for_all();
  assembler.try_put(AssemblerInput(EndOfJob{}));
  graph.wait_for_all();
  // A watch stopped while its source was failing (every listing refused) did not see the job
  // as it is: that is not an all-clear either.
  if (source_failure.empty() && watcher_) {
    if (std::string problem = watcher_->current_problem(); !problem.empty()) {
      source_failure = "the latest look at the job failed: " + std::move(problem);
    }
  }
  watcher_.reset();
  loader_ = nullptr;
  load_others.join();  // what it found wrong goes into the report

  PipelineReport report;
  report.interrupted = files_.interrupted();
  report.index_files_unread = files_.index_files_unread();
  // No issue found in part of a job is not "no issues": say where the reading stopped.
  report.source_failure = source_failure;
  LedgerSummary summary =
      ledger_->finish({.source_failure = source_failure,
                       .interrupted = report.interrupted,
                       .unread = std::to_string(report.index_files_unread) + " index files unread"},
                      [this](std::size_t rule) { return runners_[rule]->account(); });
  report.statuses = std::move(summary.statuses);
  report.conditions_met = summary.conditions_met;
  report.rule_errors = summary.rule_errors;
  for (const auto& runner : runners_) {
    report.rule_busy.push_back(runner->busy());
    report.rule_serial_busy.push_back(runner->serial_busy());
  }
  report.steps_released = progress_.steps_released;
  report.incomplete_steps = incomplete_steps_;
  report.assembler_busy = assembler_busy_;
  for (const Trial& other : others_) {
    report.other_trials_waited += other.refresh_waited();
    report.other_trials_refreshes += other.refreshes();
  }
  report.late_landings = static_cast<std::int64_t>(assembler_.late_landings());
  report.index_files = progress_.index_files;
  report.value_cache_budget = store_->cache().value_budget();
  report.value_cache_peak = store_->cache().peak_value_bytes();
  report.memory_budget_peak = memory_->peak_reserved();
  report.memory_budget_waits = memory_->waits();
  report.tensors_decoded = progress_.tensors_decoded;
  report.event_bytes = progress_.event_bytes;
  {
    std::lock_guard lock(problems_mutex_);
    report.problems = problems_;
  }
  report.read = std::to_string(report.steps_released) + " steps (" +
                std::to_string(report.incomplete_steps) + " incomplete), " +
                std::to_string(report.index_files) + " index files, " +
                std::to_string(report.tensors_decoded) + " tensors, " +
                human_bytes(static_cast<double>(report.event_bytes));
  report.evaluated_unit = "steps";
  if (report.interrupted)
    report.unread = std::to_string(report.index_files_unread) + " index files";
  return report;
}

RulePipeline::RulePipeline(PipelineConfig config, std::vector<std::unique_ptr<Sink>> sinks,
                           const RuleRegistry& registry)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(sinks), registry)) {}

RulePipeline::~RulePipeline() = default;

PipelineReport RulePipeline::run() {
  return impl_->run();
}
void RulePipeline::request_stop() {
  impl_->request_stop();
}
const JobProgress& RulePipeline::progress() const {
  return impl_->progress();
}
Trial RulePipeline::base_trial() const {
  return impl_->base_trial();
}

}  // namespace rulestream
