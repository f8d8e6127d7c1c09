#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/memory/arena_vector.hpp"
#include "core/memory/packed_reductions.hpp"
#include "core/memory/reader_slots_mutex.hpp"
#include "core/memory/record_arena.hpp"
#include "core/memory/shared_refresh.hpp"
#include "core/memory/sorted_steps.hpp"
#include "core/model/collection.hpp"
#include "core/model/exceptions.hpp"
#include "core/model/memory_budget.hpp"
#include "core/model/mode.hpp"
#include "core/model/reduction.hpp"
#include "core/model/storage.hpp"
#include "core/model/tensor_value.hpp"
#include "stages/format/index_file.hpp"
#include "stages/load/landing.hpp"
#include "trial/store/encoded_value.hpp"
#include "trial/store/inflated_files.hpp"
#include "trial/store/name_filter_cache.hpp"
#include "trial/store/record_cache.hpp"
#include "trial/store/record_ref.hpp"
#include "trial/store/step_tensors_cache.hpp"
#include "trial/store/trial_options.hpp"

namespace rulestream {

// A saved reduction of a tensor (its own record, named by RecordRef::record_name).
struct SavedReduction {
  ReductionKey key;
  RecordRef ref;
};

// What one worker saved of one tensor at one step. One per record of a job, in the store's
// arena: the worker's name, the shape and the reductions' block are the store's (one copy each
// for the whole trial), valid while it lives. Kept to 72 bytes: on a VM, fresh memory costs as
// much as the work done with it (benchmarks/RESULTS.md, "The store's memory per record").
struct WorkerSave {
  // The raw value's record, or nullptr when the worker saved only reductions.
  const RecordRef* raw() const { return raw_.file_id == kNoRecordFile ? nullptr : &raw_; }
  std::optional<RecordRef> raw_copy() const {
    return raw() ? std::optional<RecordRef>(raw_) : std::nullopt;
  }
  void set_raw(const RecordRef& ref) { raw_ = ref; }

  const std::string* worker = nullptr;  // the store's copy of the worker's name
  std::uint64_t generation = 0;
  const Shape* shape = nullptr;  // null when the index gave none
  ArenaVector<SavedReduction> reductions;

 private:
  // A file number the store never gives (RecordCache caps them far below).
  static constexpr FileId kNoRecordFile = ~FileId{0};
  RecordRef raw_{.file_id = kNoRecordFile};
};
static_assert(sizeof(WorkerSave) <= 72, "a store keeps a WorkerSave for every record of a job");

struct TensorStep {
  std::int64_t mode_step = 0;
  // In load order; in the store's arena (one per record, kept for the whole run).
  ArenaVector<WorkerSave> saves;
  Mode mode = Mode::Global;
};
static_assert(sizeof(TensorStep) <= 24,
              "a store keeps a TensorStep for every tensor at every step");

// The generation in which a tensor was first seen in each mode; kNeverSeen when it was not.
inline constexpr std::uint64_t kNeverSeen = ~std::uint64_t{0};

struct TensorHistory {
  std::uint64_t generation = 0;  // when the tensor was first seen
  // By Mode (Train = 1 ... Global = 4, at index mode - 1).
  std::array<std::uint64_t, 4> mode_generation{kNeverSeen, kNeverSeen, kNeverSeen, kNeverSeen};
  // By global step. In the store's arena: rules look up every tensor at every step, and the
  // histories of thousands of tensors in huge pages cost far fewer TLB misses than in the heap
  // (where they also land wherever parsing left holes). The arena frees nothing before the
  // store goes, so a history that grows step by step (a live watch) leaves its outgrown arrays
  // behind, up to as much again as it holds; a replay sizes it once (expect_steps).
  SortedSteps<TensorStep, ArenaAllocator<std::pair<std::int64_t, TensorStep>>> steps;

  std::uint64_t first_seen_in(Mode mode) const {
    return mode_generation[static_cast<std::size_t>(mode) - 1];
  }
};

struct StepInfo {
  Mode mode = Mode::Global;
  std::int64_t mode_step = 0;
  std::uint64_t generation = 0;
  std::vector<std::pair<std::string, std::uint64_t>> workers;  // worker, generation
  // The last generation that gave a tensor its first save at this step (a save of one more
  // worker does not count): a StepTensorsCache list built since then is still whole.
  std::uint64_t tensors_changed = 0;
  // When the step's data arrived (its earliest index file in the generation that added the
  // step): what time-based rules (StalledTrainingRule) measure gaps with.
  std::optional<std::chrono::system_clock::time_point> arrival;
};

// The steps of one mode: by mode step, the global step and the generation that added it. A
// flat array: rules translate a mode step for every tensor they read.
using ModeSteps = SortedSteps<std::pair<std::int64_t, std::uint64_t>>;

// Trial-wide figures as of one generation.
struct TrialStatus {
  std::int64_t last_complete_step = -1;
  bool loaded_all_steps = false;
  bool training_ended = false;
  int num_workers = 0;
};

// The shared, append-only state behind Trial handles.
//
// Every refresh that finds something new makes a new generation; every entry records the
// generation that added it, and nothing is ever changed once published. A query at
// generation g ignores later entries, so a pinned handle keeps seeing exactly what it saw,
// while other threads keep loading. Readers hold the shared lock; a refresh does its I/O
// without the lock and takes it exclusively only to publish.
class TrialStore {
 public:
  TrialStore(std::shared_ptr<const Storage> storage, TrialOptions options);

  const Storage& storage() const { return *storage_; }
  const TrialOptions& options() const { return options_; }

  // Lists the storage for files that appeared and ingests them. A no-op for a store fed by a
  // pipeline (set_externally_fed), which ingests what its sources find instead. Returns once
  // the store holds every file that was there when it was called. Callers that arrive during a
  // refresh share the next one (SharedRefresh), so threads that ask a live trial at once list
  // its storage once or twice, not once each.
  void refresh();
  // Refreshes unless all steps are loaded or auto refresh is off.
  void maybe_refresh();
  // Whether maybe_refresh() would list anything now: auto refresh on, steps still to come, and
  // the store not fed by a pipeline. Reads no lock.
  bool refreshes_on_query() const {
    return options_.auto_refresh && !all_steps_loaded_.load(std::memory_order_acquire) &&
           !externally_fed_.load(std::memory_order_relaxed);
  }
  // How long callers of refresh() waited for one another's refresh to end, all together: what
  // threads that asked a trial still loading lost (a pipeline's rules ask the trials they
  // compare with at every step). Any thread.
  std::chrono::nanoseconds refresh_waited() const { return refreshes_.waited(); }
  // How many refreshes have run, a refresh shared by several callers once (each lists the
  // storage, unless every step was loaded already). Any thread.
  std::uint64_t refreshes() const { return refreshes_.started(); }

  // Publishes what was found as one new generation (when anything changed). `all_loaded`
  // declares that no more files will come. Thread-safe.
  void ingest(std::vector<IndexLanding> indexes, CollectionsLanding collections,
              std::vector<TrialProblem> problems, bool training_ended, bool all_loaded);
  // One index file, as a pipeline's step assembler ingests them (without copying it).
  void ingest(const IndexLanding& index);
  // CPU time the threads calling ingest() spent in the parallel sections of ingesting index
  // files, their own share of them: a pipeline's serial assembler subtracts it from its busy
  // time, since those sections run on every thread of the arena. Safe from any thread.
  std::chrono::nanoseconds parallel_ingest_cpu() const {
    return std::chrono::nanoseconds(parallel_ingest_nanoseconds_.load(std::memory_order_relaxed));
  }
  void set_externally_fed() { externally_fed_ = true; }
  // How many steps the job is known to have so far (a replay lists them all before loading):
  // each tensor's history is sized for them once, rather than grown (and copied) step by step.
  void expect_steps(std::size_t steps) { expected_steps_ = steps; }
  // Declares every step up to `step` as available to rules, complete or not (a pipeline
  // released it: its missing workers were given up on).
  void release_through(std::int64_t step);

  // Every reduction of a raw record, computed once and cached (or put there by a decoder).
  ReductionSet reductions_of(const RecordRef& ref, const std::string& tensor) const;
  RecordCache& cache() const { return cache_; }
  // The budget its caches and inflations draw on (TrialOptions::memory_budget, or its own).
  const std::shared_ptr<MemoryBudget>& memory_budget() const { return memory_; }
  // Where landings' reductions are allocated (LandedReductions).
  const std::shared_ptr<RecordArena>& record_arena() const { return record_arena_; }
  // Which names pass which tensor_names() filters (regexes, collections).
  NameFilterCache& name_filters() const { return name_filters_; }
  // The tensors of recently asked steps (Trial::tensor_refs at a step).
  StepTensorsCache& step_tensors() const { return step_tensors_; }

  std::uint64_t generation() const;
  // The same, for a caller that holds read_lock() already.
  std::uint64_t generation_under_lock() const { return generation_; }
  TrialStatus status(std::uint64_t generation) const;

  std::shared_lock<ReaderSlotsMutex> read_lock() const {
    return std::shared_lock<ReaderSlotsMutex>(mutex_);
  }

  // Read these only under read_lock(), filtering entries by generation.
  const std::map<std::string, TensorHistory>& tensors() const { return tensors_; }
  // The tensor's history, found by hash (rules ask for every tensor at every step); nullptr
  // when the tensor was never seen. Filter by generation as for tensors().
  const TensorHistory* find_tensor(std::string_view name) const {
    const auto* entry = find_tensor_entry(name);
    return entry == nullptr ? nullptr : &entry->second;
  }
  // The same, with the store's own copy of the name (which lasts as long as the store).
  const std::pair<const std::string, TensorHistory>* find_tensor_entry(
      std::string_view name) const {
    const auto it = tensor_index_.find(name);
    return it == tensor_index_.end() ? nullptr : it->second;
  }
  const std::map<std::int64_t, StepInfo>& steps() const { return steps_; }
  const std::map<Mode, ModeSteps>& mode_steps() const { return mode_steps_; }
  const std::map<std::string, std::uint64_t>& workers() const { return workers_; }
  std::shared_ptr<const std::map<std::string, Collection>> collections(
      std::uint64_t generation) const;
  std::vector<TrialProblem> problems(std::uint64_t generation) const;
  // collections(generation()), without the store's lock. A pipeline's decoders ask at every
  // file; waiting for the lock while an index file's ingestion holds it, they would sleep, and
  // the ingestion spreads its work over the very threads that sleep (issue 23: a tenth of a
  // two-thread replay's time, idle).
  std::shared_ptr<const std::map<std::string, Collection>> latest_collections() const {
    std::lock_guard lock(latest_collections_mutex_);
    return latest_collections_;
  }

  // Reads and decodes the record (outside any lock). Throws FormatError / StorageError.
  TensorValue read_record(const RecordRef& ref, const std::string& tensor) const;
  // A record to read with read_records: where it is, and the tensor it holds.
  struct RecordRead {
    RecordRef ref;
    const std::string* tensor = nullptr;
  };
  // Reads and decodes many records (outside any lock), values[i] being reads[i]'s, as
  // read_record reads each, but the records of one event file are cut from one read of it
  // (Storage::read_records_range: a slice of its kept mapping locally, one request per batch of
  // adjacent records on S3) rather than looked up and read one by one. Throws as read_record
  // does, for the first record in file order that cannot be read.
  std::vector<TensorValue> read_records(std::span<const RecordRead> reads) const;
  // The same records read as read_records reads them, framed and their tensor fields found but
  // not decoded (a value the value cache holds comes decoded). Throws as read_records does for
  // a record that cannot be framed or holds no such tensor; EncodedValue::decode throws for one
  // whose tensor cannot be decoded.
  // (Each is there: optional only so that the caller can move them where it wants them.)
  std::vector<std::optional<EncodedValue>> read_encoded(std::span<const RecordRead> reads) const;
  // EncodedValue::decode: decodes the TensorProto `encoded` (within the record `ref`'s payload,
  // as locate_record found it), and caches the value as read_record does.
  TensorValue decode_located(const RecordRef& ref, const std::string& tensor,
                             const SharedBytes& payload, std::span<const std::byte> encoded) const;
  // EncodedValue::dtype: the dtype that TensorProto declares, read without decoding it.
  std::optional<DType> dtype_located(const RecordRef& ref, const std::string& tensor,
                                     const SharedBytes& payload,
                                     std::span<const std::byte> encoded) const;
  // The record's event file, relative to the trial root.
  const std::string& file_of(const RecordRef& ref) const { return cache_.file_name(ref.file_id); }
  // "<storage>/<file> (tensor '<record's tag>')": where a record sits, for error messages.
  std::string describe_record(const RecordRef& ref, const std::string& tensor) const;

 private:
  using TensorEntry = std::pair<const std::string, TensorHistory>;
  // One index file's tensors into the histories (trial_store_ingest.cpp), under mutex_ held
  // exclusively. A file of many tensors is spread over the threads of the calling arena.
  void add_index(const IndexLanding& index, std::uint64_t generation);
  // One refresh: lists the storage and ingests what is new (refresh() runs it through
  // refreshes_, never two at once).
  void refresh_now();
  // One position of the index file being ingested, as its sections find it.
  struct Placement {
    TensorEntry* entry = nullptr;  // the tensor's; null until made for a name never seen
    RecordRef ref;
    std::optional<ReductionKey> reduction;  // a saved reduction of the entry's tensor
    std::uint8_t shard = 0;                 // which task writes the entry's saves
  };
  // add_index's sections (trial_store_ingest.cpp says what runs where, and on which threads).
  bool place(const IndexLanding& pending, std::vector<TensorEntry*>& layout, FileId file_id,
             std::size_t shards, std::size_t begin, std::size_t end);
  void make_new_entries(const IndexLanding& pending, std::uint64_t generation,
                        std::vector<TensorEntry*>& layout, std::size_t shards);
  // Writes the saves of the positions shard_positions_ lists for `shard`.
  bool save_shard(const IndexLanding& pending, std::uint64_t generation, const std::string* worker,
                  std::size_t shard);
  // Fills shard_positions_ and shard_starts_ from the placements' shards (serial).
  void group_positions_by_shard(std::size_t shards);
  // The entry of a tensor never seen (made serially).
  TensorEntry& new_entry(const std::string& name, std::uint64_t generation);
  // The worker's save at the file's step in the entry's history, made when missing; `changed`
  // set when the history gains the step. Touches that history and the arena only.
  WorkerSave& save_at(TensorEntry& entry, const IndexLanding& pending, std::uint64_t generation,
                      const std::string* worker, bool& changed);
  // read_record without asking the value cache first (read_records asked it already).
  TensorValue read_uncached(const RecordRef& ref, const std::string& tensor) const;
  // Frames and decodes the record `ref` from exactly its bytes, and caches the value.
  TensorValue decode_record(const RecordRef& ref, const std::string& tensor,
                            SharedBytes bytes) const;
  // decode_record's first half: frames the record from exactly its bytes and finds its tensor
  // field (known when the pipeline decoded it as it landed), without decoding it.
  EncodedValue locate_record(const RecordRef& ref, const std::string& tensor,
                             SharedBytes bytes) const;
  // Positions in `reads` of the records the value cache does not hold; each value it holds is
  // handed to cached(i, value) (read_records and read_encoded ask it first).
  template <typename Cached>
  std::vector<std::size_t> uncached_reads(std::span<const RecordRead> reads, Cached&& cached) const;
  // The bytes of each record reads[i], i in `unread`, handed to each(i, bytes) (exactly the
  // record's bytes, as read_uncached reads them): one read per batch of a file's records.
  template <typename Each>
  void read_record_bytes(std::span<const RecordRead> reads, std::vector<std::size_t> unread,
                         Each&& each) const;
  // The record's bytes, exactly (FormatError when its index named no event file).
  SharedBytes record_bytes(const RecordRef& ref, const std::string& tensor) const;
  // "<storage>/<file> at offset N (tensor 'name')", for errors.
  std::string record_place(const RecordRef& ref, const std::string& tensor) const;
  // Publishes generation `next` when anything changed (the caller holds mutex_ exclusively).
  void publish(std::uint64_t next, bool changed, bool training_ended, bool final_pass);
  bool in_range(std::int64_t step) const;

  std::shared_ptr<const Storage> storage_;
  TrialOptions options_;
  // What cache_, inflated_ and the inflations of read_record draw on (TrialOptions).
  std::shared_ptr<MemoryBudget> memory_;
  // Declared after storage_: the event files it opened there (file_handle) go before it.
  mutable RecordCache cache_;
  mutable InflatedFiles inflated_;  // compressed event files, inflated
  // Declared before tensors_: their steps' saves live in it, so it must go after them.
  std::shared_ptr<RecordArena> record_arena_ = std::make_shared<RecordArena>();
  mutable NameFilterCache name_filters_;
  mutable StepTensorsCache step_tensors_;
  std::atomic<bool> externally_fed_{false};
  std::atomic<std::size_t> expected_steps_{0};
  // Whether the latest status has loaded_all_steps (it never goes back): maybe_refresh asks at
  // every value a rule reads, and reading it needs no lock.
  std::atomic<bool> all_steps_loaded_{false};

  // One refresh at a time, shared by the callers that arrive while one runs.
  SharedRefresh refreshes_;
  // Read by every rule thread at every lookup: readers count themselves apart.
  mutable ReaderSlotsMutex mutex_;

  // Published state (guarded by mutex_).
  std::uint64_t generation_ = 0;
  std::vector<TrialStatus> statuses_{TrialStatus{}};  // by generation
  std::map<std::string, TensorHistory> tensors_;
  // tensors_ by hash, keyed by views of tensors_'s own keys (map nodes never move).
  std::unordered_map<std::string_view, TensorEntry*> tensor_index_;
  // By worker (a view of workers_'s key): the entry of each position of its last index file.
  std::unordered_map<std::string_view, std::vector<TensorEntry*>> worker_layouts_;
  std::map<std::int64_t, StepInfo> steps_;
  std::map<Mode, ModeSteps> mode_steps_;
  std::map<std::string, std::uint64_t> workers_;
  // What WorkerSave::shape and RecordRef::record_name point at: each shape and each saved
  // reduction's name once, however many records share it.
  std::set<Shape> shapes_;
  std::set<std::string, std::less<>> record_names_;
  std::vector<std::pair<std::uint64_t, std::shared_ptr<const std::map<std::string, Collection>>>>
      collections_;  // (generation, collections) in load order
  // The last of collections_, once published; its mutex is held for a pointer copy only.
  mutable std::mutex latest_collections_mutex_;
  std::shared_ptr<const std::map<std::string, Collection>> latest_collections_;
  std::optional<int> declared_num_workers_;
  std::vector<std::pair<std::uint64_t, TrialProblem>> problems_;
  // What RecordRef::reductions point into.
  std::vector<std::shared_ptr<const LandedReductions>> landed_reductions_;
  // add_index's scratch, one per position of the file being ingested (guarded by mutex_).
  std::vector<Placement> placements_;
  // The positions of placements_ grouped by shard, in position order within each:
  // shard_positions_[shard_starts_[s] .. shard_starts_[s + 1]) are shard s's (guarded by mutex_).
  std::vector<std::uint32_t> shard_positions_;
  std::vector<std::uint32_t> shard_starts_;
  // CPU time the ingesting thread spent in add_index's parallel sections (its share of them).
  std::atomic<std::int64_t> parallel_ingest_nanoseconds_{0};

  // Refresh bookkeeping: touched only by refresh_now(), which refreshes_ runs one at a time.
  std::map<std::string, bool> seen_index_files_;
  std::map<std::string, bool> seen_collection_files_;
  std::optional<std::chrono::steady_clock::time_point> end_marker_seen_at_;
};

}  // namespace rulestream
