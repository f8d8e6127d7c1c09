#include "pipeline/graph/rule_pipeline.hpp"

#include <tbb/flow_graph.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <filesystem>
#include <iostream>
#include <limits>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <variant>

#include "pipeline/graph/configuration_check.hpp"
#include "pipeline/graph/sink_routing.hpp"
#include "pipeline/graph/stop_action.hpp"
#include "pipeline/model/exceptions.hpp"
#include "pipeline/model/name_regex.hpp"
#include "pipeline/model/trial_layout.hpp"
#include "pipeline/store/trial_store.hpp"
#include "sources/open/storage_factory.hpp"
#include "sources/open/trial_source_factory.hpp"
#include "stages/assemble/step_assembler.hpp"
#include "stages/format/index_file.hpp"
#include "stages/load/decode_selection.hpp"
#include "stages/load/event_file_loader.hpp"
#include "stages/load/index_loader.hpp"

namespace rulestream {
namespace {

namespace flow = tbb::flow;

// A step the assembler released: rules may evaluate it.
struct StepReady {
  std::int64_t step = 0;
  Mode mode = Mode::Global;
  std::int64_t mode_step = 0;
  bool incomplete = false;
};
// A rule that watches the clock is due a look at it (Rule::invoke_at_time).
struct TimeCheck {};
// What a rule's serial node handles: steps in order, and time checks between them.
using RuleMessage = std::variant<StepReady, TimeCheck>;
struct Tick {};
// Holds every step while a collections file is being read.
constexpr std::int64_t kCollectionsInFlight = -1;
struct EndOfJob {};
// A landing travels by pointer: the flow graph copies what it buffers, and a landing holds a
// name per tensor (a copy of each was 4% of a small-tensor replay's instructions).
using LandingPtr = std::shared_ptr<const IndexLanding>;
using AssemblerInput = std::variant<LandingPtr, Tick, EndOfJob>;

// One configured rule and how its evaluation is going. Touched only by its own serial node
// until the graph has drained.
struct RuleSlot {
  std::size_t index = 0;  // in configuration order
  RuleConfig config;
  std::unique_ptr<Rule> rule;
  std::int64_t evaluated = 0;
  std::int64_t fired = 0;
  std::chrono::steady_clock::duration busy{};  // in evaluate()
  bool errored = false;
  std::string error;
  // What runs the first time the rule fires: its own stop actions, or the defaults when it
  // asks to stop training and has none.
  std::vector<StopAction> stop_actions;
  bool stop_ran = false;
  // A time check is queued on the rule's node: a rule busy with a backlog of steps gets one,
  // not one per tick.
  std::atomic<bool> time_check_queued{false};
};

// How long the end of a run waits for stop commands still running, to report how they ended.
constexpr std::chrono::seconds kStopCommandWait{10};

std::vector<RequiredTensors> required_by(const std::vector<std::unique_ptr<RuleSlot>>& slots) {
  std::vector<RequiredTensors> required;
  for (const auto& slot : slots) required.push_back(slot->rule->required_tensors());
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
    // Every trial's decoded values share --max-memory.
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
      // Loaded when the run starts, while the first trial streams (run()).
      others_.push_back(
          Trial::open_deferred(open_storage(config_.paths[i], config_.storage), other));
    }
    for (const auto& rule_config : config_.rules) {
      // Each rule's handles count apart: rules run in parallel, and every Tensor a rule makes
      // copies its handle (one shared counter was 3% of an all-rules replay).
      std::vector<Trial> others;
      for (const Trial& other : others_) others.push_back(other.separately_counted());
      const RuleContext context{base_->separately_counted(), others};
      ConfiguredRule configured =
          configure_rule(rule_config, context, config_.default_stop_actions, registry);
      auto slot = std::make_unique<RuleSlot>();
      slot->index = slots_.size();
      slot->config = std::move(configured.config);
      slot->rule = std::move(configured.rule);
      slot->stop_actions = std::move(configured.stop_actions);
      slots_.push_back(std::move(slot));
    }
    routing_ = std::make_unique<SinkRouting>(configured_rules(), sink_labels());
    selection_ = std::make_unique<DecodeSelection>(required_by(slots_));
    keeper_ = std::make_unique<StoreValueKeeper>(*store_);
    loader_body_ = std::make_unique<EventFileLoader>(
        storage_, store_->record_arena(), config_.check_data_crc,
        [this](std::string path, std::string message) {
          report_problem(std::move(path), std::move(message));
        },
        LoadCounters{.event_bytes = &progress_.event_bytes,
                     .tensors_decoded = &progress_.tensors_decoded});
  }

  PipelineReport run();

  void request_stop() {
    stop_requested_ = true;
    boost::asio::post(io_, [this] { finish_following(); });
  }

  const PipelineProgress& progress() const { return progress_; }
  Trial base_trial() const { return *base_; }

 private:
  using Loader = flow::multifunction_node<TrialFile, std::tuple<AssemblerInput>>;
  using Assembler = flow::multifunction_node<AssemblerInput, std::tuple<RuleMessage>>;
  using RuleNode = flow::function_node<RuleMessage>;

  // Hands a file to the loader once; index files count as in flight until their landing has
  // been assembled, so no later step overtakes a step still being read.
  // `seen_at`: when a live pipeline saw the file (nullopt: its modification time tells when it
  // arrived), which becomes its step's arrival time.
  void announce(Loader& loader, TrialFile file,
                std::optional<std::chrono::system_clock::time_point> seen_at = std::nullopt);
  void landed_or_dropped(std::int64_t step);
  // Tells the store how many steps the initial scan found (it sizes tensor histories by it).
  void expect_steps(const std::vector<TrialFile>& files);
  std::optional<std::chrono::system_clock::time_point> arrival_of(const TrialFile& file);
  std::optional<std::int64_t> lowest_in_flight();
  void load(const TrialFile& file, Loader::output_ports_type& ports);
  void load_collections(const TrialFile& file);
  // Whether an index file of `step` is left unread because a replay was asked to stop.
  bool skipped_after_stop(std::int64_t step);
  // Decodes and reduces the records of the landing's event file that the rules use.
  void decode(IndexLanding& landing);
  void assemble(const AssemblerInput& input, Assembler::output_ports_type& ports);
  void release(Assembler::output_ports_type& ports);
  void evaluate(RuleSlot& slot, const StepReady& ready);
  void check_time(RuleSlot& slot);
  void fire(RuleSlot& slot, RuleEvent event);
  void dispatch(const RuleSlot& slot, const RuleEvent& event);
  std::vector<RuleConfig> configured_rules() const;
  std::vector<SinkLabel> sink_labels() const;
  void start_time_checks(std::vector<std::unique_ptr<RuleNode>>& nodes);
  void schedule_time_check(boost::asio::steady_timer& timer, std::chrono::milliseconds interval,
                           RuleSlot& slot, RuleNode& node);
  void report_problem(std::string path, std::string message);
  void finish_following();
  void rescan_into(Loader& loader);
  bool in_range(std::int64_t step) const {
    return (!config_.start_step || step >= *config_.start_step) &&
           (!config_.end_step || step < *config_.end_step);
  }

  PipelineConfig config_;
  std::vector<std::unique_ptr<Sink>> sinks_;
  std::shared_ptr<const Storage> storage_;
  std::shared_ptr<TrialStore> store_;
  std::optional<Trial> base_;
  std::vector<Trial> others_;
  std::vector<std::unique_ptr<RuleSlot>> slots_;
  std::unique_ptr<SinkRouting> routing_;
  std::unique_ptr<DecodeSelection> selection_;
  std::unique_ptr<StoreValueKeeper> keeper_;
  std::unique_ptr<EventFileLoader> loader_body_;
  StepAssembler assembler_;
  PipelineProgress progress_;

  std::mutex problems_mutex_;
  std::vector<TrialProblem> problems_;
  // After what its failures are reported to: destroyed (no more reports) before them.
  StopActionRunner stopper_{[this](const std::string& line) { report_problem("", line); }};
  std::mutex seen_mutex_;
  std::set<std::string> seen_files_;
  std::multiset<std::int64_t> in_flight_;  // guarded by seen_mutex_
  std::unordered_map<std::string, std::chrono::system_clock::time_point>
      seen_at_;  // guarded by seen_mutex_
  std::mutex collections_mutex_;

  boost::asio::io_context io_;
  std::unique_ptr<TrialSource> watcher_;
  std::unique_ptr<boost::asio::steady_timer> end_timer_;
  std::unique_ptr<boost::asio::steady_timer> tick_timer_;
  std::vector<std::unique_ptr<boost::asio::steady_timer>> time_check_timers_;
  Loader* loader_ = nullptr;
  std::int64_t incomplete_steps_ = 0;  // touched by the serial assembler only
  bool job_ended_ = false;             // likewise
  std::atomic<bool> stop_requested_{false};
  // Guarded by seen_mutex_: the highest step whose index files began loading, and where a
  // replay asked to stop stops.
  std::int64_t highest_step_begun_ = std::numeric_limits<std::int64_t>::min();
  std::optional<std::int64_t> stop_after_step_;
  std::int64_t index_files_unread_ = 0;
  std::atomic<bool> end_marker_seen_{false};
  bool following_ = false;
};

void RulePipeline::Impl::report_problem(std::string path, std::string message) {
  std::lock_guard lock(problems_mutex_);
  std::cerr << "rulestream: " << message << "\n";
  problems_.push_back({std::move(path), std::move(message)});
}

void RulePipeline::Impl::announce(Loader& loader, TrialFile file,
                                  std::optional<std::chrono::system_clock::time_point> seen_at) {
  {
    std::lock_guard lock(seen_mutex_);
    if (!seen_files_.insert(file.path).second) return;
    if (seen_at && file.kind == TrialFile::Kind::Index) seen_at_.emplace(file.path, *seen_at);
    if (file.kind == TrialFile::Kind::Index) {
      if (const auto name = parse_step_file_name(file.path)) in_flight_.insert(name->step);
    } else if (file.kind == TrialFile::Kind::Collections) {
      // Rules select tensors by collection: no step goes out before the collections are in.
      in_flight_.insert(kCollectionsInFlight);
    }
  }
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

void RulePipeline::Impl::landed_or_dropped(std::int64_t step) {
  std::lock_guard lock(seen_mutex_);
  if (const auto it = in_flight_.find(step); it != in_flight_.end()) in_flight_.erase(it);
}

std::optional<std::chrono::system_clock::time_point> RulePipeline::Impl::arrival_of(
    const TrialFile& file) {
  {
    std::lock_guard lock(seen_mutex_);
    if (const auto it = seen_at_.find(file.path); it != seen_at_.end()) {
      const auto seen = it->second;
      seen_at_.erase(it);
      return seen;
    }
  }
  return arrival_from_modified_ns(file.modified_ns);
}

std::optional<std::int64_t> RulePipeline::Impl::lowest_in_flight() {
  std::lock_guard lock(seen_mutex_);
  if (in_flight_.empty()) return std::nullopt;
  return *in_flight_.begin();
}

void RulePipeline::Impl::load(const TrialFile& file, Loader::output_ports_type& ports) {
  switch (file.kind) {
    case TrialFile::Kind::Collections:
      // Read when announced (announce()). Steps held while the collections loaded may go now;
      // without a nudge they would wait for the next file to land.
      std::get<0>(ports).try_put(AssemblerInput(Tick{}));
      return;
    case TrialFile::Kind::EndMarker:
      end_marker_seen_ = true;
      if (following_) {
        boost::asio::post(io_, [this] {
          end_timer_ = std::make_unique<boost::asio::steady_timer>(io_, config_.end_of_job_grace);
          end_timer_->async_wait([this](const boost::system::error_code& error) {
            if (!error) finish_following();
          });
        });
      }
      return;
    case TrialFile::Kind::Index:
      break;
  }
  const auto name = parse_step_file_name(file.path);
  if (!name) return;
  if (skipped_after_stop(name->step)) {
    landed_or_dropped(name->step);
    std::get<0>(ports).try_put(AssemblerInput(Tick{}));
    return;
  }
  if (file.path.ends_with(".json")) progress_.index_files_seen++;
  IndexFileLoad load = load_index_file(*storage_, file.path, *name, arrival_of(file));
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
    landed_or_dropped(name->step);
    std::get<0>(ports).try_put(AssemblerInput(Tick{}));  // it held later steps: re-check them
    return;
  }
  IndexLanding& landing = *load.landing;
  progress_.index_files++;
  std::get<0>(ports).try_put(
      AssemblerInput(std::make_shared<const IndexLanding>(std::move(landing))));
}

bool RulePipeline::Impl::skipped_after_stop(std::int64_t step) {
  std::lock_guard lock(seen_mutex_);
  if (!stop_requested_ || config_.follow) {
    highest_step_begun_ = std::max(highest_step_begun_, step);
    return false;
  }
  // A replay asked to stop finishes the steps it has begun (so none goes out with only some of
  // its workers) and reads no later index file.
  if (!stop_after_step_) stop_after_step_ = highest_step_begun_;
  if (step <= *stop_after_step_) return false;
  index_files_unread_++;
  return true;
}

void RulePipeline::Impl::load_collections(const TrialFile& file) {
  struct Done {
    Impl& impl;
    ~Done() { impl.landed_or_dropped(kCollectionsInFlight); }
  } done{*this};
  const auto worker = parse_collections_worker(file.path);
  if (!worker) return;
  std::lock_guard lock(collections_mutex_);
  const bool define = !store_->collections(store_->generation());
  CollectionsFileLoad load = load_collections_file(*storage_, file.path, *worker, define);
  if (load.problem) report_problem(load.problem->path, load.problem->message);
  store_->ingest({}, std::move(load.landing), {}, false, false);
}

void RulePipeline::Impl::decode(IndexLanding& landing) {
  // Which rules still read whole values: a rule may stop part-way (Rule::done_reading_values).
  std::vector<bool> reading;
  for (const auto& slot : slots_) reading.push_back(slot->rule->reads_values());
  const auto uses =
      selection_->uses(landing.index.tensors, store_->collections(store_->generation()), reading);
  landing.reductions = loader_body_->load(landing.index, uses, *keeper_);
}

void RulePipeline::Impl::assemble(const AssemblerInput& input,
                                  Assembler::output_ports_type& ports) {
  const auto now = StepAssembler::Clock::now();
  if (const auto* landing = std::get_if<LandingPtr>(&input)) {
    store_->ingest(**landing);
    assembler_.landed((*landing)->step, (*landing)->worker, now);
    landed_or_dropped((*landing)->step);
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
  std::optional<std::int64_t> held = lowest_in_flight();
  // Until a collections file says how many workers the job has, a step with one worker's files
  // may still be waiting for another's: hold everything (smdebug waits for the collections
  // too), unless the job ended or a grace period lets silent workers go.
  if (!job_ended_ && config_.worker_grace.count() == 0 &&
      !store_->collections(store_->generation())) {
    held = std::numeric_limits<std::int64_t>::min();
  }
  for (const auto& ready : assembler_.take_ready(StepAssembler::Clock::now(), held)) {
    // Rules wait for their step through the trial: tell it this one may be looked at.
    store_->release_through(ready.step);
    StepReady message;
    message.step = ready.step;
    message.mode = base_->mode(ready.step).value_or(Mode::Global);
    message.mode_step = base_->mode_step(ready.step).value_or(ready.step);
    message.incomplete = ready.incomplete;
    progress_.steps_released++;
    progress_.last_step = ready.step;
    if (ready.incomplete) incomplete_steps_++;
    std::get<0>(ports).try_put(message);
  }
}

void RulePipeline::Impl::evaluate(RuleSlot& slot, const StepReady& ready) {
  if (slot.errored || !in_range(ready.step)) return;
  struct BusyTimer {
    std::chrono::steady_clock::duration& busy;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    ~BusyTimer() { busy += std::chrono::steady_clock::now() - start; }
  } timer{slot.busy};
  try {
    slot.rule->invoke(ready.step);
    slot.evaluated++;
  } catch (const RuleEvaluationConditionMet&) {
    slot.evaluated++;
    const Finding& finding = slot.rule->last_finding();
    RuleEvent event;
    event.global_step = ready.step;
    event.mode = ready.mode;
    event.mode_step = ready.mode_step;
    event.tensors = finding.tensors;
    event.figures = finding.figures;
    event.message = finding.message.empty()
                        ? std::string(slot.rule->name()) + " condition met at step " +
                              std::to_string(ready.step)
                        : finding.message;
    if (ready.incomplete) event.message += " (not every worker had written this step)";
    fire(slot, std::move(event));
  } catch (const TensorUnavailableForStep&) {
    // What this rule reads was not saved at this step: smdebug skips the step too.
  } catch (const TensorUnavailable&) {
  } catch (const StepUnavailable&) {
  } catch (const StepNotYetAvailable&) {
  } catch (const NoMoreData&) {
  } catch (const FormatError& error) {
    report_problem(error.where(), "rule " + slot.config.configuration_name + " at step " +
                                      std::to_string(ready.step) + ": " + error.what());
  } catch (const StorageError& error) {
    report_problem("", "rule " + slot.config.configuration_name + " at step " +
                           std::to_string(ready.step) + ": " + error.what());
  } catch (const std::exception& error) {
    slot.errored = true;
    slot.error = "at step " + std::to_string(ready.step) + ": " + error.what();
  }
}

// A time check runs on the rule's own node, between its steps. Once the job has written its end
// marker, silence is the end of training, not a stall.
void RulePipeline::Impl::check_time(RuleSlot& slot) {
  slot.time_check_queued = false;
  if (slot.errored || end_marker_seen_) return;
  try {
    if (!slot.rule->invoke_at(std::chrono::system_clock::now())) return;
    const Finding& finding = slot.rule->last_finding();
    RuleEvent event;
    // The step the finding names (the last one seen), or -1 before any.
    event.global_step = finding.step.value_or(-1);
    event.mode = finding.step ? base_->mode(*finding.step).value_or(Mode::Global) : Mode::Global;
    event.mode_step =
        finding.step ? base_->mode_step(*finding.step).value_or(*finding.step) : std::int64_t{-1};
    event.tensors = finding.tensors;
    event.figures = finding.figures;
    event.message = finding.message.empty()
                        ? std::string(slot.rule->name()) + " condition met with no new step"
                        : finding.message;
    fire(slot, std::move(event));
  } catch (const std::exception& error) {
    slot.errored = true;
    slot.error = std::string("checking the time: ") + error.what();
  }
}

// Sends a condition-met event out and, the first time the rule fires, runs its stop actions.
void RulePipeline::Impl::fire(RuleSlot& slot, RuleEvent event) {
  slot.fired++;
  event.kind = RuleEvent::Kind::ConditionMet;
  event.time = std::chrono::system_clock::now();
  event.trial = base_->name();
  event.rule_configuration = slot.config.configuration_name;
  event.rule = std::string(slot.rule->name());
  dispatch(slot, event);
  if (slot.stop_ran || slot.stop_actions.empty()) return;
  slot.stop_ran = true;
  const StopRequest request{event.rule_configuration, event.rule, event.trial, event.global_step};
  for (const auto& action : slot.stop_actions) stopper_.run(action, request);
}

void RulePipeline::Impl::dispatch(const RuleSlot& slot, const RuleEvent& event) {
  for (const std::size_t i : routing_->sinks_of(slot.index)) {
    const auto& sink = sinks_[i];
    try {
      sink->write(event);
    } catch (const std::exception& error) {
      report_problem("", sink->describe() + ": " + error.what());
    }
  }
}

std::vector<RuleConfig> RulePipeline::Impl::configured_rules() const {
  std::vector<RuleConfig> rules;
  for (const auto& slot : slots_) rules.push_back(slot->config);
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

void RulePipeline::Impl::start_time_checks(std::vector<std::unique_ptr<RuleNode>>& nodes) {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const auto interval = slots_[i]->rule->check_interval();
    if (!interval) continue;
    auto& timer =
        *time_check_timers_.emplace_back(std::make_unique<boost::asio::steady_timer>(io_));
    schedule_time_check(timer, std::max(*interval, std::chrono::milliseconds(1)), *slots_[i],
                        *nodes[i]);
  }
}

void RulePipeline::Impl::schedule_time_check(boost::asio::steady_timer& timer,
                                             std::chrono::milliseconds interval, RuleSlot& slot,
                                             RuleNode& node) {
  timer.expires_after(interval);
  timer.async_wait([this, &timer, interval, &slot, &node](const boost::system::error_code& error) {
    if (error || !following_) return;
    // Past --end-step the rule is done with this job: no alarms about what comes after.
    const bool past_end = config_.end_step && progress_.last_step >= *config_.end_step - 1;
    if (!past_end && !slot.time_check_queued.exchange(true)) {
      node.try_put(RuleMessage(TimeCheck{}));
    }
    schedule_time_check(timer, interval, slot, node);
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

PipelineReport RulePipeline::Impl::run() {
  // The trials rules compare with are loaded beside the pipeline rather than before it: opening
  // one is a listing and a parse of every index file (0.45 s for the 300-step benchmark job),
  // which the first trial's decoding and its other rules need not wait for. A rule that asks
  // about such a trial before it is loaded waits for the load (TrialStore::refresh holds its
  // refresh lock) and then sees all of it.
  std::jthread load_others([this] {
    for (const Trial& other : others_) {
      try {
        other.load();
      } catch (const RulestreamError& error) {
        report_problem(other.path(), error.what());
      }
    }
  });
  flow::graph graph;
  const std::size_t decoders = config_.threads > 0
                                   ? static_cast<std::size_t>(config_.threads)
                                   : std::max(2u, std::thread::hardware_concurrency());
  Loader loader(graph, decoders, [this](const TrialFile& file, Loader::output_ports_type& ports) {
    load(file, ports);
  });
  // Assembling and evaluating go before decoding more files: when rules lag behind the decoders,
  // the values decoded for them are evicted before they are read (max_memory) and every rule
  // reads them again from disk. Priorities only order ready tasks; they change no result.
  constexpr flow::node_priority_t kDownstreamFirst = 1;
  Assembler assembler(
      graph, flow::serial,
      [this](const AssemblerInput& input, Assembler::output_ports_type& ports) {
        assemble(input, ports);
      },
      kDownstreamFirst);
  flow::make_edge(flow::output_port<0>(loader), assembler);
  std::vector<std::unique_ptr<RuleNode>> rule_nodes;
  for (auto& slot : slots_) {
    RuleSlot* target = slot.get();
    rule_nodes.push_back(std::make_unique<RuleNode>(
        graph, flow::serial,
        [this, target](const RuleMessage& message) {
          if (const auto* ready = std::get_if<StepReady>(&message)) {
            evaluate(*target, *ready);
          } else {
            check_time(*target);
          }
          return flow::continue_msg();
        },
        kDownstreamFirst));
    flow::make_edge(flow::output_port<0>(assembler), *rule_nodes.back());
  }
  loader_ = &loader;

  following_ = config_.follow && !stop_requested_;
  // Files already there when watching began (the source's first batch, its initial scan)
  // arrived when they were written; later ones when the pipeline saw them.
  watcher_ = make_trial_source(
      io_, storage_,
      TrialSourceOptions{.follow = following_, .poll_interval = config_.poll_interval},
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
            [this, &assembler, self = weak.lock()](const boost::system::error_code& error) {
              if (error) return;
              assembler.try_put(AssemblerInput(Tick{}));
              (*self)();
            });
      };
      (*tick)();
    }
    start_time_checks(rule_nodes);
    io_.run();
  } else {
    io_.run();  // the initial scan
  }
  graph.wait_for_all();
  assembler.try_put(AssemblerInput(EndOfJob{}));
  graph.wait_for_all();
  watcher_.reset();
  loader_ = nullptr;
  load_others.join();  // what it found wrong goes into the report

  // Stop commands run on their own; give them a moment to say how they ended.
  const auto stop_outcomes = stopper_.finish(kStopCommandWait);
  PipelineReport report;
  {
    std::lock_guard lock(seen_mutex_);
    report.interrupted = stop_after_step_.has_value();
    report.index_files_unread = index_files_unread_;
  }
  for (const auto& slot : slots_) {
    RuleEvent status;
    status.kind = RuleEvent::Kind::Status;
    status.time = std::chrono::system_clock::now();
    status.trial = base_->name();
    status.rule_configuration = slot->config.configuration_name;
    status.rule = std::string(slot->rule->name());
    status.steps_evaluated = slot->evaluated;
    status.times_fired = slot->fired;
    report.rule_busy.push_back(slot->busy);
    if (slot->errored) {
      status.status = RuleStatus::Error;
      status.message = slot->error;
      report.rule_errors = true;
    } else {
      status.status = slot->fired > 0 ? RuleStatus::IssuesFound : RuleStatus::NoIssuesFound;
    }
    if (report.interrupted) {
      // No issue found in part of a job is not "no issues": say where the reading stopped.
      status.message = "interrupted: not read to the end (" +
                       std::to_string(report.index_files_unread) + " index files unread)" +
                       (status.message.empty() ? "" : "; " + status.message);
    }
    if (const auto it = stop_outcomes.find(slot->config.configuration_name);
        it != stop_outcomes.end()) {
      for (const auto& outcome : it->second) {
        status.message += (status.message.empty() ? "" : "; ") + outcome;
      }
    }
    report.conditions_met += slot->fired;
    dispatch(*slot, status);
    report.statuses.push_back(std::move(status));
  }
  for (const auto& sink : sinks_) sink->flush();
  report.steps_released = progress_.steps_released;
  report.incomplete_steps = incomplete_steps_;
  report.late_landings = static_cast<std::int64_t>(assembler_.late_landings());
  report.index_files = progress_.index_files;
  report.tensors_decoded = progress_.tensors_decoded;
  report.event_bytes = progress_.event_bytes;
  {
    std::lock_guard lock(problems_mutex_);
    report.problems = problems_;
  }
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
const PipelineProgress& RulePipeline::progress() const {
  return impl_->progress();
}
Trial RulePipeline::base_trial() const {
  return impl_->base_trial();
}

}  // namespace rulestream
