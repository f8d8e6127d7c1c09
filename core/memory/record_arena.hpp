#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace rulestream {

// Memory for what a trial store keeps of every record until it goes (the reductions computed as
// records land): taken from large regions, bump-allocated, never freed one by one. The regions
// are aligned to 2 MiB.
//
// Faulting a region in is the largest single cost of a small-tensor replay on the development
// VM, and it used to happen under the store's exclusive lock, while rules waited. So once an
// arena outgrows its first region, a thread of idle priority (SCHED_IDLE: it runs only on a core
// with nothing else to do) maps the next region and faults it in ahead of need; allocate() takes
// that spare when it is ready and maps one itself when it is not. At most one region (32 MiB by
// default) is held ahead.
//
// Only the spares ask for transparent huge pages (MADV_HUGEPAGE: a few dozen faults for a job of
// a million records, and fewer TLB misses for the rules' lookups). A region allocate() maps
// itself takes 4 KiB pages (MADV_NOHUGEPAGE): it is faulted in on the critical path of a replay
// with no core to spare, where a huge page the kernel has to find and zero whole cost up to
// 2.5 ms/MiB on that VM, against 0.4 ms/MiB in 4 KiB pages (benchmarks/RESULTS.md, "Huge pages
// only where they are faulted in ahead"). Where the kernel has no huge pages, all regions are
// ordinary memory.
//
// Safe to allocate from many threads at once. Small allocations (the loaders' reductions, one
// per record, and the store's per-step entries) come from a chunk each thread takes from the
// region under the mutex, a chunk at a time, and then bumps through without it: with one
// mutex per allocation, sixteen threads queued on it (issue 23). A thread leaves at most a
// chunk unused per arena each time it moves on. Chunks grow with what the arena has handed
// out (1/64 of it, from kFirstChunkBytes to kChunkBytes): a store of a small job, one of a
// thousand a service follows with threads going from job to job, wastes little, and a
// replay's big store soon takes chunks large enough to pass the mutex rarely.
class RecordArena {
 public:
  static constexpr std::size_t kDefaultRegionBytes = std::size_t{32} << 20;

  explicit RecordArena(std::size_t region_bytes = kDefaultRegionBytes);
  ~RecordArena();
  RecordArena(const RecordArena&) = delete;
  RecordArena& operator=(const RecordArena&) = delete;

  // `bytes` at an `alignment` (a power of two, at most 4096), zero-filled, valid while the
  // arena lives. A request larger than a quarter region gets a region of its own. Throws
  // std::bad_alloc when the memory cannot be mapped.
  void* allocate(std::size_t bytes, std::size_t alignment);

  // What a thread takes at a time for small allocations, and the most one may be.
  static constexpr std::size_t kChunkBytes = std::size_t{64} << 10;
  static constexpr std::size_t kFirstChunkBytes = std::size_t{2} << 10;
  static constexpr std::size_t kMostFromChunk = 1024;

  // Bytes of the regions mapped so far, the spare included (address space; pages count in RSS
  // once touched).
  std::size_t mapped_bytes() const;
  // Regions the background thread mapped ahead and allocate() then used. For tests.
  std::size_t spares_used() const;
  // Waits until the spare region the arena asked for is faulted in and ready; false when none
  // is coming (nothing asked for one yet, no background thread could start, or its region could
  // not be mapped). For tests, which must not guess how long an idle-priority thread waits for
  // a core: it takes as long as it takes.
  bool wait_for_spare() const;

 private:
  // Which pages a region asks the kernel for (advice, where it has transparent huge pages).
  enum class Pages { Huge, Small };
  // Maps an aligned region (the caller records it in regions_ under mutex_).
  std::byte* map_region(std::size_t bytes, Pages pages);
  // The region allocate() moves on to: the spare when one is ready, else a new one.
  std::byte* next_region();
  void prefault_loop();
  // allocate() under the mutex: large requests, and chunks.
  void* allocate_locked(std::size_t bytes, std::size_t alignment);
  // A chunk for a thread's small allocations, sized by what the arena handed out so far; its
  // size in `bytes`.
  void* allocate_chunk(std::size_t& bytes);

  // Tells this arena's chunks apart from those of an arena that lived at the same address
  // before it (threads keep theirs in a thread_local cache keyed by it).
  const std::uint64_t id_;

  std::size_t region_bytes_;
  mutable std::mutex mutex_;
  std::vector<std::pair<std::byte*, std::size_t>> regions_;
  std::size_t handed_out_ = 0;  // bytes allocate_locked() gave, chunks included
  std::byte* next_ = nullptr;
  std::byte* end_ = nullptr;

  // The spare region (guarded by mutex_).
  std::byte* spare_ = nullptr;
  bool spare_wanted_ = false;
  bool stopping_ = false;
  std::size_t spares_used_ = 0;
  std::condition_variable spare_requested_;
  // Notified when the background thread has made a spare, or failed to.
  mutable std::condition_variable spare_done_;
  bool faulting_ = false;   // the background thread is making a spare
  std::thread prefaulter_;  // started when the first region fills
  bool prefaulter_failed_ = false;
};

// A standard allocator that draws from a RecordArena, for containers the store keeps until it
// goes; giving memory back is a no-op (the arena frees it all at once). A default-constructed
// one has no arena and uses operator new and delete, so containers made before the store
// hands them its arena work as usual; assignment takes the other container's allocator.
template <typename T>
class ArenaAllocator {
 public:
  using value_type = T;
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;

  ArenaAllocator() = default;
  explicit ArenaAllocator(RecordArena* arena) : arena_(arena) {}
  template <typename U>
  ArenaAllocator(const ArenaAllocator<U>& other) : arena_(other.arena()) {}  // NOLINT: rebinding

  T* allocate(std::size_t count) {
    if (arena_ == nullptr) return static_cast<T*>(::operator new(count * sizeof(T)));
    return static_cast<T*>(arena_->allocate(count * sizeof(T), alignof(T)));
  }
  void deallocate(T* memory, std::size_t) {
    if (arena_ == nullptr) ::operator delete(memory);
  }

  RecordArena* arena() const { return arena_; }
  friend bool operator==(const ArenaAllocator& a, const ArenaAllocator& b) {
    return a.arena_ == b.arena_;
  }

 private:
  RecordArena* arena_ = nullptr;
};

}  // namespace rulestream
