#include "core/memory/record_arena.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <new>
#include <system_error>

namespace rulestream {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

std::size_t round_up(std::size_t value, std::size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

std::uint64_t next_arena_id() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

// The chunks this thread is bumping through, one per arena it allocated from lately (a thread
// allocates from a store or two at once); the least recently refilled one makes room.
struct LocalChunks {
  struct Chunk {
    std::uint64_t arena = 0;  // RecordArena::id_; 0: none
    std::uintptr_t next = 0;
    std::uintptr_t end = 0;
  };
  static constexpr std::size_t kArenas = 4;
  std::array<Chunk, kArenas> chunks{};
  std::size_t oldest = 0;

  Chunk& of(std::uint64_t arena) {
    for (Chunk& chunk : chunks) {
      if (chunk.arena == arena) return chunk;
    }
    Chunk& chunk = chunks[oldest];
    oldest = (oldest + 1) % kArenas;
    chunk = Chunk{arena, 0, 0};
    return chunk;
  }
};

thread_local LocalChunks local_chunks;

}  // namespace

RecordArena::RecordArena(std::size_t region_bytes)
    : id_(next_arena_id()),
      region_bytes_(round_up(region_bytes == 0 ? kHugePage : region_bytes, kHugePage)) {}

RecordArena::~RecordArena() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  spare_requested_.notify_all();
  spare_done_.notify_all();
  if (prefaulter_.joinable()) prefaulter_.join();
  for (const auto& [address, bytes] : regions_) ::munmap(address, bytes);
}

std::byte* RecordArena::map_region(std::size_t bytes, Pages pages) {
  // Mapped a huge page larger and trimmed to a 2 MiB boundary: only aligned 2 MiB ranges can be
  // backed by huge pages.
  const std::size_t mapped = bytes + kHugePage;
  void* address =
      ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (address == MAP_FAILED) throw std::bad_alloc();
  auto* start = static_cast<std::byte*>(address);
  const auto misalign = reinterpret_cast<std::uintptr_t>(start) % kHugePage;
  const std::size_t lead = misalign == 0 ? 0 : kHugePage - misalign;
  if (lead > 0) ::munmap(start, lead);
  if (kHugePage - lead > 0) ::munmap(start + lead + bytes, kHugePage - lead);
  start += lead;
  // Advice only: a kernel without transparent huge pages (or with them off) keeps 4 KiB pages.
  static_cast<void>(
      ::madvise(start, bytes, pages == Pages::Huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE));
  return start;
}

std::byte* RecordArena::next_region() {
  std::byte* region = spare_;
  if (region != nullptr) {
    spare_ = nullptr;
    ++spares_used_;
  } else {
    region = map_region(region_bytes_, Pages::Small);
    regions_.emplace_back(region, region_bytes_);
  }
  spare_wanted_ = true;
  if (prefaulter_.joinable()) {
    spare_requested_.notify_one();
  } else if (!prefaulter_failed_) {
    try {
      prefaulter_ = std::thread([this] { prefault_loop(); });
    } catch (const std::system_error&) {
      prefaulter_failed_ = true;  // no thread to spare: regions are mapped as they are needed
      spare_done_.notify_all();
    }
  }
  return region;
}

void RecordArena::prefault_loop() {
  // Only on an otherwise idle core: the faults are work the pipeline would do anyway, and must
  // never take a core from it. Lowering one's own policy needs no privilege.
  sched_param idle{};
  static_cast<void>(::pthread_setschedparam(::pthread_self(), SCHED_IDLE, &idle));
  std::unique_lock lock(mutex_);
  while (true) {
    spare_requested_.wait(lock, [&] { return stopping_ || (spare_wanted_ && spare_ == nullptr); });
    if (stopping_) return;
    spare_wanted_ = false;
    faulting_ = true;
    lock.unlock();
    std::byte* region = nullptr;
    try {
      region = map_region(region_bytes_, Pages::Huge);
    } catch (const std::bad_alloc&) {
      // allocate() maps its own and reports the failure if it recurs.
    }
    if (region != nullptr) {
      // Touching each page faults it in (a huge page at a time where the kernel gives them);
      // zeros keep the memory as a fresh mapping is.
      for (std::size_t offset = 0; offset < region_bytes_; offset += 4096) {
        static_cast<volatile std::byte*>(region)[offset] = std::byte{0};
      }
    }
    lock.lock();
    if (region != nullptr) {
      regions_.emplace_back(region, region_bytes_);
      spare_ = region;
    }
    faulting_ = false;
    spare_done_.notify_all();
  }
}

void* RecordArena::allocate(std::size_t bytes, std::size_t alignment) {
  if (bytes == 0) bytes = 1;
  if (bytes > kMostFromChunk || alignment > kMostFromChunk) {
    return allocate_locked(bytes, alignment);
  }
  LocalChunks::Chunk& chunk = local_chunks.of(id_);
  std::uintptr_t aligned = round_up(chunk.next, alignment);
  if (chunk.next == 0 || aligned > chunk.end || chunk.end - aligned < bytes) {
    // The rest of the chunk is left unused: regions are never reused, so what comes next is
    // still zero.
    std::size_t chunk_bytes = 0;
    const auto start = reinterpret_cast<std::uintptr_t>(allocate_chunk(chunk_bytes));
    chunk.next = start;
    chunk.end = start + chunk_bytes;
    aligned = round_up(chunk.next, alignment);
  }
  chunk.next = aligned + bytes;
  return reinterpret_cast<void*>(aligned);
}

void* RecordArena::allocate_chunk(std::size_t& bytes) {
  std::size_t handed_out = 0;
  {
    std::lock_guard lock(mutex_);
    handed_out = handed_out_;
  }
  bytes = std::clamp(round_up(handed_out / 64, 64), kFirstChunkBytes, kChunkBytes);
  return allocate_locked(bytes, 64);
}

void* RecordArena::allocate_locked(std::size_t bytes, std::size_t alignment) {
  std::lock_guard lock(mutex_);
  handed_out_ += bytes;
  if (bytes > region_bytes_ / 4) {
    const std::size_t rounded = round_up(bytes, kHugePage);
    std::byte* region = map_region(rounded, Pages::Small);
    regions_.emplace_back(region, rounded);
    return region;
  }
  // In integers: a rounded-up address may lie past the region's end.
  const auto end = reinterpret_cast<std::uintptr_t>(end_);
  auto aligned = round_up(reinterpret_cast<std::uintptr_t>(next_), alignment);
  if (next_ == nullptr || aligned > end || end - aligned < bytes) {
    // The first region is mapped here: a store that never fills one has no thread.
    std::byte* region = nullptr;
    if (next_ == nullptr) {
      region = map_region(region_bytes_, Pages::Small);
      regions_.emplace_back(region, region_bytes_);
    } else {
      region = next_region();
    }
    end_ = region + region_bytes_;
    aligned = reinterpret_cast<std::uintptr_t>(region);  // 2 MiB aligned
  }
  auto* result = reinterpret_cast<std::byte*>(aligned);
  next_ = result + bytes;
  return result;
}

bool RecordArena::wait_for_spare() const {
  std::unique_lock lock(mutex_);
  spare_done_.wait(lock, [&] {
    return spare_ != nullptr || stopping_ || prefaulter_failed_ || (!spare_wanted_ && !faulting_);
  });
  return spare_ != nullptr;
}

std::size_t RecordArena::spares_used() const {
  std::lock_guard lock(mutex_);
  return spares_used_;
}

std::size_t RecordArena::mapped_bytes() const {
  std::lock_guard lock(mutex_);
  std::size_t total = 0;
  for (const auto& region : regions_) total += region.second;
  return total;
}

}  // namespace rulestream
