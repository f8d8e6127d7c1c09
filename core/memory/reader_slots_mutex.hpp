#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "core/memory/shared_ranges.hpp"

namespace rulestream {

// A reader-writer mutex whose readers do not share a cache line: each reader counts itself in
// one of kSlots padded counters (picked by thread), where std::shared_mutex has every reader
// write the same word. A store is read millions of times a replay (a lookup per tensor per rule
// per step) from every thread, and written once per index file; with one shared word, sixteen
// threads spent more time passing its cache line around than reading (on 16 cores, the serial
// nodes of two rules that read a reduction per tensor took ten times their one-thread CPU time,
// measured with pipeline_e2e --threads-sweep).
//
// Readers: lock_shared() adds one to the thread's slot, then checks for a writer; if one holds or
// is waiting for the lock, it takes its count back and waits for the writer to finish. Writers:
// lock() takes the writer mutex (one writer at a time), announces itself, then waits until every
// slot is zero. Both sides' sequentially consistent operations order "count myself, then look
// for the other" (Dekker), so a reader and a writer never both go ahead.
//
// Writers go first: a reader arriving while a writer waits backs off, so a stream of readers
// cannot starve the writer. A thread may take a shared lock it already holds (nested reads):
// the thread notes the locks it reads under and does not back off from a writer while it holds
// one, since that writer would wait for it forever. Not for a thread that holds the lock
// exclusively (no mutex is re-entrant for its writer).
//
// A reader held up by a writer does the writer's work rather than sleep, where the writer
// offers some (offer): a store's writer ingests an index file over several threads, and the
// readers it holds up are those threads (issue 23: on two cores, a replay's readers slept about
// 90 times waiting for ingestions that wanted their help). A reader that finds nothing to do
// sleeps until the writer unlocks or offers work.
//
// Concurrency: every member is safe from any thread; meets the standard's SharedMutex
// requirements used here (std::shared_lock, std::unique_lock).
class ReaderSlotsMutex {
 public:
  ReaderSlotsMutex() = default;
  ReaderSlotsMutex(const ReaderSlotsMutex&) = delete;
  ReaderSlotsMutex& operator=(const ReaderSlotsMutex&) = delete;

  void lock_shared();
  void unlock_shared();
  void lock();
  void unlock();

  // For the thread holding the lock exclusively: readers that wait for it from now on run
  // `ranges` too (SharedRanges::drain), those asleep are woken for it. One offer at a time;
  // withdraw() ends it, returning once no reader can still reach `ranges` (it may then go).
  void offer(SharedRanges& ranges);
  void withdraw();

  // The CPU time the calling thread has spent running writers' ranges while it waited for a
  // shared lock (any ReaderSlotsMutex): work of the writer's, which a serial node that took a
  // lookup's wait for it subtracts from its own busy time, as it does its parallel sections.
  // Kept in thread_cpu_lent() (core/model/busy_timer.hpp), which floors that may not see
  // this one read: a rule's parallel section leaves out what it lent, so that it is not
  // subtracted twice.
  static std::chrono::nanoseconds helped_cpu();

  // The wall time readers of every ReaderSlotsMutex in the process have spent held up by a
  // writer (asleep or looking for its work), less what they spent running its ranges: what the
  // store's exclusive ingestion costs the threads that wanted to read meanwhile. Any thread;
  // a diagnostic (pipeline_e2e prints it beside a replay's figures).
  static std::chrono::nanoseconds readers_held_up();

  // The wall time writers of every ReaderSlotsMutex in the process have spent in lock() waiting
  // for the readers inside to leave (spinning, then yielding the core): part of a store's
  // ingestion that runs on its serial node and grows with the readers, so a diagnostic beside
  // readers_held_up. Nothing is timed when no reader is inside. Any thread.
  static std::chrono::nanoseconds writers_waited();

 private:
  // A waiting reader runs what the writer offers; true when it ran any.
  bool help_writer();

  static constexpr std::size_t kSlots = 64;
  struct alignas(64) Slot {
    std::atomic<std::uint32_t> readers{0};
  };
  Slot& my_slot();

  std::array<Slot, kSlots> slots_{};
  alignas(64) std::atomic<bool> writer_{false};
  // Readers that found a writer sleep on this; the writer changes it to wake them (unlock, offer).
  std::atomic<std::uint32_t> wake_{0};
  std::atomic<SharedRanges*> offered_{nullptr};
  std::atomic<std::uint32_t> helpers_{0};  // readers that may be looking at offered_
  std::mutex writers_;                     // one writer at a time
};

}  // namespace rulestream
