#include "pipeline/memory/reader_slots_mutex.hpp"

#include <algorithm>
#include <thread>

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
  for (;;) {
    slot.readers.fetch_add(1, std::memory_order_seq_cst);
    if (!writer_.load(std::memory_order_seq_cst)) break;
    slot.readers.fetch_sub(1, std::memory_order_seq_cst);
    writer_.wait(true, std::memory_order_acquire);
  }
  held_locks.add(this);
}

void ReaderSlotsMutex::unlock_shared() {
  held_locks.remove(this);
  my_slot().readers.fetch_sub(1, std::memory_order_release);
}

void ReaderSlotsMutex::lock() {
  writers_.lock();
  writer_.store(true, std::memory_order_seq_cst);
  for (Slot& slot : slots_) {
    // Readers hold the lock briefly (a lookup, a listing): spin a little, then give the core up.
    for (int spins = 0; slot.readers.load(std::memory_order_seq_cst) != 0; ++spins) {
      if (spins > 64) std::this_thread::yield();
    }
  }
}

void ReaderSlotsMutex::unlock() {
  writer_.store(false, std::memory_order_release);
  writer_.notify_all();
  writers_.unlock();
}

}  // namespace rulestream
