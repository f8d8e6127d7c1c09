// TrialStore::add_index: one index file's tensors into the store's histories.
//
// A pipeline's step assembler ingests every index file on its serial node, so whatever this
// costs bounds the speedup more threads can give (issue 23: on the small job, 2,011 tensors a
// file, it was a tenth of a four-rule replay's work). It runs in three sections:
//
//   1. place (parallel over ranges of positions): each position's record and the entry of its
//      tensor, found from the worker's layout (the entry at that position last time) or by hash,
//      and the entry's shard (below). Reads the store's maps only.
//   2. make_new_entries (serial): entries for names never seen, with their shards, and saved
//      reductions' names. Only a job's first files, or one whose tensors change, have any.
//   3. save_shard (parallel over shards): each entry's step and worker save written. An entry
//      belongs to one shard (by its address), and a shard to one task, so no two tasks write
//      one history; positions are visited in order within a shard, so saves keep load order.
//      The positions are grouped by shard first (serially, a counting pass): a task that walked
//      every position to pick out its own did shards times the work, and could prefetch the
//      history it writes next only when the position a few ahead happened to be its own.
//
// Sections 1 and 3 run on the calling arena's threads, isolated (a thread waiting for them
// takes no unrelated work, such as decoding the next file, which would hold the serial node
// up), and on the readers the store's lock holds up meanwhile: rules and decoders that asked
// for the store while it ingests do its work rather than sleep (for_ranges). A file of fewer
// tensors than a few tasks' worth runs all three on the calling thread, without oneTBB: a task
// costs more than a few hundred tensors' placing.
//
// Concurrency: called with mutex_ held exclusively (no reader looks meanwhile); the tasks of
// one call share the store as the sections say. RecordArena allocates from many threads.

#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "core/memory/reader_slots_mutex.hpp"
#include "core/memory/shared_ranges.hpp"
#include "core/model/busy_timer.hpp"
#include "core/model/trial_layout.hpp"
#include "stages/format/index_file.hpp"
#include "trial/store/trial_store.hpp"

namespace rulestream {

namespace {

// Positions a task places at least, and tensors per shard at least: below a few hundred, a
// task's cost (about a microsecond to hand out and join) is more than the work it carries.
constexpr std::size_t kPositionsPerTask = 256;
constexpr std::size_t kMostShards = 64;

// How many shards a file of `positions` tensors is written in: enough for every thread of the
// calling arena to take a few (they finish at different times), 1 for a small file.
std::size_t shards_for(std::size_t positions) {
  const auto threads = static_cast<std::size_t>(tbb::this_task_arena::max_concurrency());
  if (threads <= 1 || positions < 2 * kPositionsPerTask) return 1;
  return std::min({kMostShards, 4 * threads, positions / kPositionsPerTask});
}

// An entry's shard: its address, mixed (map nodes sit at allocator-aligned addresses, so the
// low bits say little), then scaled to [0, shards) by a multiply rather than a division (a
// division per position was a fifth of what stayed serial of an ingestion). Stable for the
// store's life: map nodes never move.
std::uint8_t shard_of(const void* entry, std::size_t shards) {
  const auto bits = reinterpret_cast<std::uintptr_t>(entry) >> 4;
  const std::uint64_t mixed = (bits * 0x9E3779B97F4A7C15ULL) >> 32;
  return static_cast<std::uint8_t>((mixed * shards) >> 32);
}

// Runs body(begin, end) over [0, count) in ranges of `grain`: inline when not `parallel`; else
// on the calling thread, on tasks of its arena (isolated: a thread waiting for them takes no
// unrelated work, such as decoding the next file, which would hold the serial node up), and on
// the readers the store's lock holds up meanwhile (ReaderSlotsMutex::offer), which would
// otherwise sleep until the ingestion ends. An exception from `body` is rethrown here.
template <typename Body>
void for_ranges(ReaderSlotsMutex& lock, std::size_t count, std::size_t grain, bool parallel,
                const Body& body) {
  if (!parallel) {
    body(std::size_t{0}, count);
    return;
  }
  SharedRanges ranges(count, grain, [&](std::size_t begin, std::size_t end) { body(begin, end); });
  struct Offer {
    ReaderSlotsMutex& lock;
    explicit Offer(ReaderSlotsMutex& held, SharedRanges& offered) : lock(held) {
      lock.offer(offered);
    }
    ~Offer() { lock.withdraw(); }  // after the tasks: no one can reach the ranges then
    Offer(const Offer&) = delete;
    Offer& operator=(const Offer&) = delete;
  };
  {
    const Offer offer(lock, ranges);
    const auto threads = static_cast<std::size_t>(tbb::this_task_arena::max_concurrency());
    const std::size_t tasks = std::min(threads - 1, (count + grain - 1) / grain - 1);
    tbb::this_task_arena::isolate([&] {
      tbb::task_group group;
      for (std::size_t i = 0; i < tasks; ++i) group.run([&] { ranges.drain(); });
      ranges.drain();
      group.wait();
    });
    ranges.wait_done();
  }
  ranges.rethrow();
}

// Asks for what writing a save touches, a few positions ahead: the history's header and the
// end of its steps, where this step goes. Each is a cache miss otherwise, one after another.
template <typename Entry>
void prefetch_history(const Entry* entry) {
  if (entry == nullptr) return;
  __builtin_prefetch(entry);
  // As an integer: the entry before the tail is not there while the steps are empty, and a
  // prefetch of any address is harmless where pointer arithmetic past an array is not.
  const auto tail = reinterpret_cast<std::uintptr_t>(entry->second.steps.tail());
  if (tail != 0) {
    __builtin_prefetch(reinterpret_cast<const void*>(tail), 1);
    __builtin_prefetch(
        reinterpret_cast<const void*>(tail - sizeof(std::pair<std::int64_t, TensorStep>)));
  }
}

}  // namespace

void TrialStore::add_index(const IndexLanding& pending, std::uint64_t generation) {
  const IndexFile& index = pending.index;
  const Mode mode = index.mode;
  auto [step_it, new_step] = steps_.try_emplace(pending.step);
  StepInfo& info = step_it->second;
  if (new_step) {
    info.mode = mode;
    info.mode_step = index.mode_step;
    info.generation = generation;
  }
  // The earliest worker's file within the generation that adds the step; once published the
  // arrival never changes (a pinned view must keep seeing what it saw).
  if (pending.arrival && info.generation == generation &&
      (!info.arrival || *pending.arrival < *info.arrival)) {
    info.arrival = pending.arrival;
  }
  if (mode != Mode::Global) {
    const auto [entry, added] = mode_steps_[mode].try_emplace(index.mode_step);
    if (added) *entry = {pending.step, generation};
  }
  if (std::none_of(info.workers.begin(), info.workers.end(),
                   [&](const auto& entry) { return entry.first == pending.worker; })) {
    info.workers.emplace_back(pending.worker, generation);
  }
  const std::string* const worker = &workers_.try_emplace(pending.worker, generation).first->first;
  const FileId file_id = cache_.file_id(index.event_file_name.value_or(""), storage_.get());
  if (pending.reductions) landed_reductions_.push_back(pending.reductions);
  std::vector<TensorEntry*>& layout = worker_layouts_[*worker];
  if (layout.size() < index.tensors.size()) layout.resize(index.tensors.size(), nullptr);

  const std::size_t positions = index.tensors.size();
  placements_.assign(positions, Placement{});
  const std::size_t shards = shards_for(positions);
  const bool parallel = shards > 1;
  std::chrono::nanoseconds parallel_cpu{};
  // Whether any position has a name never seen or is a saved reduction: section 2 walks every
  // position, and most files have neither.
  std::atomic<bool> second_section{false};
  {
    BusyTimer busy(parallel_cpu);
    for_ranges(mutex_, positions, kPositionsPerTask, parallel,
               [&](std::size_t begin, std::size_t end) {
                 if (!place(pending, layout, file_id, shards, begin, end)) {
                   second_section.store(true, std::memory_order_relaxed);
                 }
               });
  }
  // The ranges' writes are seen here (SharedRanges::wait_done and oneTBB's join order them).
  if (second_section.load(std::memory_order_relaxed)) {
    make_new_entries(pending, generation, layout, shards);
  }
  group_positions_by_shard(shards);
  std::vector<std::uint8_t> changed(shards, 0);  // one flag per shard: no two tasks share one
  {
    BusyTimer busy(parallel_cpu);
    for_ranges(mutex_, shards, 1, parallel, [&](std::size_t begin, std::size_t end) {
      for (std::size_t shard = begin; shard != end; ++shard) {
        changed[shard] = save_shard(pending, generation, worker, shard) ? 1 : 0;
      }
    });
  }
  if (std::find(changed.begin(), changed.end(), 1) != changed.end()) {
    info.tensors_changed = generation;
  }
  if (parallel) {
    parallel_ingest_nanoseconds_.fetch_add(parallel_cpu.count(), std::memory_order_relaxed);
  }

  if (index.shapes) {
    bool shapes_changed = false;
    for (const auto& shape : *index.shapes) {
      const auto found = tensor_index_.find(shape.tensor_name);
      TensorEntry& entry = found != tensor_index_.end()
                               ? *found->second
                               : new_entry(shape.tensor_name, generation);  // no record listed
      save_at(entry, pending, generation, worker, shapes_changed).shape =
          &*shapes_.insert(shape.shape).first;
    }
    if (shapes_changed) info.tensors_changed = generation;
  }
}

TrialStore::TensorEntry& TrialStore::new_entry(const std::string& name, std::uint64_t generation) {
  auto [it, added] = tensors_.try_emplace(name);
  TensorEntry& entry = *it;
  if (added) {
    entry.second.generation = generation;
    entry.second.steps = decltype(entry.second.steps)(
        ArenaAllocator<std::pair<std::int64_t, TensorStep>>(record_arena_.get()));
    entry.second.steps.reserve(expected_steps_.load(std::memory_order_relaxed));
    tensor_index_.emplace(entry.first, &entry);
  }
  return entry;
}

WorkerSave& TrialStore::save_at(TensorEntry& entry, const IndexLanding& pending,
                                std::uint64_t generation, const std::string* worker,
                                bool& changed) {
  RecordArena& arena = *record_arena_;
  const Mode mode = pending.index.mode;
  TensorHistory& history = entry.second;
  std::uint64_t& first_in_mode = history.mode_generation[static_cast<std::size_t>(mode) - 1];
  if (first_in_mode == kNeverSeen) first_in_mode = generation;
  auto [tensor_step_ptr, new_tensor_step] = history.steps.try_emplace(pending.step);
  TensorStep& tensor_step = *tensor_step_ptr;
  if (new_tensor_step) {
    changed = true;
    tensor_step.mode = mode;
    tensor_step.mode_step = pending.index.mode_step;
    tensor_step.saves.reserve(std::max<std::size_t>(workers_.size(), 1), arena);
  }
  for (auto& save : tensor_step.saves) {
    if (save.worker == worker) return save;
  }
  WorkerSave save;
  save.worker = worker;
  save.generation = generation;
  return tensor_step.saves.push_back(save, arena);
}

// Section 1. Reads tensor_index_ and the entries' names (no section writes them meanwhile) and
// writes only its own positions of placements_ and of the worker's layout. False when section 2
// has work in [begin, end): a name never seen, or a saved reduction.
bool TrialStore::place(const IndexLanding& pending, std::vector<TensorEntry*>& layout,
                       FileId file_id, std::size_t shards, std::size_t begin, std::size_t end) {
  bool placed = true;
  const auto& tensors = pending.index.tensors;
  const LandedReductions* landed = pending.reductions.get();
  // landed->records ascend: the first set at or after `begin`.
  std::size_t next_set = 0;
  if (landed != nullptr) {
    next_set = static_cast<std::size_t>(
        std::lower_bound(landed->records.begin(), landed->records.end(), begin) -
        landed->records.begin());
  }
  // The comparison below is two cache misses, one after the other: the entry (its name's
  // header), then the name's characters. Each is asked for a few positions early, the second
  // once the first has had time to arrive.
  constexpr std::size_t kNear = 4;
  constexpr std::size_t kFar = 12;
  for (std::size_t i = begin; i < end; ++i) {
    if (i + kFar < end) __builtin_prefetch(layout[i + kFar]);
    if (i + kNear < end && layout[i + kNear] != nullptr) {
      __builtin_prefetch(layout[i + kNear]->first.data());
    }
    const TensorLocation& location = tensors[i];
    Placement& placement = placements_[i];
    placement.ref = RecordRef{file_id, 0, location.start, location.length, nullptr, nullptr};
    if (landed != nullptr && next_set < landed->records.size() && landed->records[next_set] == i) {
      if (landed->computed[next_set] != 0) {
        placement.ref.reductions = &landed->sets[next_set];
        placement.ref.tensor_field = landed->tensor_fields[next_set];
      }
      ++next_set;
    }
    // A worker's index files list the same tensors in the same order step after step: the
    // entry at the same position last time is tried before hashing the name.
    std::string_view tensor = location.tensor_name;
    const auto reduction = parse_reduction_tensor_name(tensor);
    if (reduction) {
      placement.reduction = reduction->second;
      tensor = reduction->first;
      placed = false;  // its record gets the store's copy of its name
    }
    TensorEntry* entry = layout[i];
    if (entry == nullptr || entry->first != tensor) {
      const auto indexed = tensor_index_.find(tensor);
      entry = indexed != tensor_index_.end() ? indexed->second : nullptr;
      layout[i] = entry;
    }
    placement.entry = entry;
    if (entry != nullptr) {
      placement.shard = shard_of(entry, shards);
    } else {
      placed = false;
    }
  }
  return placed;
}

// Section 2, serial: what section 1 could not find is made, and every saved reduction's
// record gets the store's copy of its own name.
void TrialStore::make_new_entries(const IndexLanding& pending, std::uint64_t generation,
                                  std::vector<TensorEntry*>& layout, std::size_t shards) {
  const auto& tensors = pending.index.tensors;
  for (std::size_t i = 0; i < placements_.size(); ++i) {
    Placement& placement = placements_[i];
    const std::string& name = tensors[i].tensor_name;
    if (placement.reduction) placement.ref.record_name = &*record_names_.insert(name).first;
    if (placement.entry != nullptr) continue;
    if (placement.reduction) {
      placement.entry = &new_entry(parse_reduction_tensor_name(name)->first, generation);
    } else {
      placement.entry = &new_entry(name, generation);
    }
    placement.shard = shard_of(placement.entry, shards);
    layout[i] = placement.entry;
  }
}

// Between sections 2 and 3, serial: a counting sort of the positions by shard, stable.
void TrialStore::group_positions_by_shard(std::size_t shards) {
  shard_starts_.assign(shards + 1, 0);
  for (const Placement& placement : placements_) ++shard_starts_[placement.shard + 1];
  for (std::size_t shard = 0; shard < shards; ++shard) {
    shard_starts_[shard + 1] += shard_starts_[shard];
  }
  shard_positions_.resize(placements_.size());
  std::vector<std::uint32_t> next(shard_starts_.begin(), shard_starts_.end() - 1);
  for (std::size_t i = 0; i < placements_.size(); ++i) {
    shard_positions_[next[placements_[i].shard]++] = static_cast<std::uint32_t>(i);
  }
}

// Section 3: the saves of this shard's entries, in position order. Writes only those entries'
// histories (and what the arena hands out). True when a history gained the step.
bool TrialStore::save_shard(const IndexLanding& pending, std::uint64_t generation,
                            const std::string* worker, std::size_t shard) {
  RecordArena& arena = *record_arena_;
  bool changed = false;
  const std::uint32_t* const positions = shard_positions_.data() + shard_starts_[shard];
  const std::size_t count = shard_starts_[shard + 1] - shard_starts_[shard];
  constexpr std::size_t kAhead = 4;
  for (std::size_t k = 0; k < count; ++k) {
    if (k + kAhead < count) prefetch_history(placements_[positions[k + kAhead]].entry);
    const Placement& placement = placements_[positions[k]];
    WorkerSave& save = save_at(*placement.entry, pending, generation, worker, changed);
    if (!placement.reduction) {
      save.set_raw(placement.ref);
      continue;
    }
    // A save published before this generation may be held by readers, in copies that share
    // its reductions' block (Tensor queries copy a save out under the read lock and read it
    // after): it gets a block of its own before it changes. Only a second index file for the
    // same step and worker does this.
    if (save.generation != generation) save.reductions = save.reductions.copied_to(arena);
    const auto existing = std::find_if(
        save.reductions.begin(), save.reductions.end(),
        [&](const SavedReduction& entry) { return entry.key == *placement.reduction; });
    if (existing != save.reductions.end()) {
      existing->ref = placement.ref;
    } else {
      save.reductions.push_back({*placement.reduction, placement.ref}, arena);
    }
  }
  return changed;
}

}  // namespace rulestream
