#include "core/memory/reader_slots_mutex.hpp"

#include <algorithm>
#include <optional>
#include <thread>

#include "core/model/busy_timer.hpp"

namespace rulestream {
namespace {

// The shared locks this thread holds, with how many times each (nested reads). A thread reads
// under a few stores at once at most; more than fit are counted as held, which only makes such
// a thread slower to yield to writers, never wrong.
struct HeldLocks {
  static constexpr std::size_t kMost = 8;
  std::array<const void*, kMost> locks{};
  std::array<std::uint32_t, kMost> depths{};
  std::uint32_t overflow = 0;

  std::uint32_t* depth_of(const void* lock) {
    for (std::size_t i = 0; i < kMost; ++i) {
      if (locks[i] == lock && depths[i] > 0) return &depths[i];
    }
    return nullptr;
  }
  void add(const void* lock) {
    for (std::size_t i = 0; i < kMost; ++i) {
      if (depths[i] == 0) {
        locks[i] = lock;
        depths[i] = 1;
        return;
      }
    }
    overflow++;
  }
  void remove(const void* lock) {
    if (std::uint32_t* depth = depth_of(lock)) {
      --*depth;
    } else if (overflow > 0) {
      overflow--;
    }
  }
};

thread_local HeldLocks held_locks;

// ReaderSlotsMutex::readers_held_up's total, in nanoseconds.
std::atomic<std::int64_t> held_up_total{0};
// ReaderSlotsMutex::writers_waited's total, in nanoseconds.
std::atomic<std::int64_t> writers_waited_total{0};

std::size_t next_slot() {
  static std::atomic<std::size_t> next{0};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

ReaderSlotsMutex::Slot& ReaderSlotsMutex::my_slot() {
  // Threads take slots in turn, so up to kSlots threads never share one.
  thread_local const std::size_t slot = next_slot();
  return slots_[slot % kSlots];
}

void ReaderSlotsMutex::lock_shared() {
  Slot& slot = my_slot();
  if (std::uint32_t* depth = held_locks.depth_of(this)) {
    // Nested: the writer, if any, is waiting for this thread's first hold; do not wait for it.
    slot.readers.fetch_add(1, std::memory_order_seq_cst);
    ++*depth;
    return;
  }
  slot.readers.fetch_add(1, std::memory_order_seq_cst);
  if (!writer_.load(std::memory_order_seq_cst)) {  // no writer: the common case, nothing timed
    held_locks.add(this);
    return;
  }
  slot.readers.fetch_sub(1, std::memory_order_seq_cst);
  const auto held_up_since = std::chrono::steady_clock::now();
  const auto helped_before = thread_cpu_lent();
  for (;;) {
    slot.readers.fetch_add(1, std::memory_order_seq_cst);
    if (!writer_.load(std::memory_order_seq_cst)) break;
    slot.readers.fetch_sub(1, std::memory_order_seq_cst);
    // Read before looking for work: an unlock or an offer after this changes it, and the wait
    // below then returns at once.
    const std::uint32_t seen = wake_.load(std::memory_order_seq_cst);
    if (help_writer()) continue;
    if (!writer_.load(std::memory_order_seq_cst)) continue;
    wake_.wait(seen, std::memory_order_seq_cst);
  }
  const auto held_up =
      std::chrono::steady_clock::now() - held_up_since - (thread_cpu_lent() - helped_before);
  held_up_total.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(held_up).count(),
                          std::memory_order_relaxed);
  held_locks.add(this);
}

std::chrono::nanoseconds ReaderSlotsMutex::readers_held_up() {
  return std::chrono::nanoseconds(held_up_total.load(std::memory_order_relaxed));
}

bool ReaderSlotsMutex::help_writer() {
  // Counted before looking: withdraw() waits for the count to fall to zero after taking the
  // offer back, so what this finds stays valid until the count is given back (Dekker again).
  helpers_.fetch_add(1, std::memory_order_seq_cst);
  SharedRanges* ranges = offered_.load(std::memory_order_seq_cst);
  bool ran = false;
  if (ranges != nullptr) {
    BusyTimer helping(thread_cpu_lent());
    ran = ranges->drain();
  }
  helpers_.fetch_sub(1, std::memory_order_seq_cst);
  return ran;
}

std::chrono::nanoseconds ReaderSlotsMutex::helped_cpu() {
  return thread_cpu_lent();
}

void ReaderSlotsMutex::offer(SharedRanges& ranges) {
  offered_.store(&ranges, std::memory_order_seq_cst);
  wake_.fetch_add(1, std::memory_order_seq_cst);
  wake_.notify_all();
}

void ReaderSlotsMutex::withdraw() {
  offered_.store(nullptr, std::memory_order_seq_cst);
  for (int spins = 0; helpers_.load(std::memory_order_seq_cst) != 0; ++spins) {
    if (spins > 64) std::this_thread::yield();
  }
}

void ReaderSlotsMutex::unlock_shared() {
  held_locks.remove(this);
  my_slot().readers.fetch_sub(1, std::memory_order_release);
}

void ReaderSlotsMutex::lock() {
  writers_.lock();
  writer_.store(true, std::memory_order_seq_cst);
  std::optional<std::chrono::steady_clock::time_point> waiting_since;  // set at the first reader
  for (Slot& slot : slots_) {
    // Readers hold the lock briefly (a lookup, a listing): spin a little, then give the core up.
    for (int spins = 0; slot.readers.load(std::memory_order_seq_cst) != 0; ++spins) {
      if (!waiting_since) waiting_since = std::chrono::steady_clock::now();
      if (spins > 64) std::this_thread::yield();
    }
  }
  if (waiting_since) {
    writers_waited_total.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                       std::chrono::steady_clock::now() - *waiting_since)
                                       .count(),
                                   std::memory_order_relaxed);
  }
}

std::chrono::nanoseconds ReaderSlotsMutex::writers_waited() {
  return std::chrono::nanoseconds(writers_waited_total.load(std::memory_order_relaxed));
}

void ReaderSlotsMutex::unlock() {
  writer_.store(false, std::memory_order_seq_cst);
  wake_.fetch_add(1, std::memory_order_seq_cst);
  wake_.notify_all();
  writers_.unlock();
}

}  // namespace rulestream
