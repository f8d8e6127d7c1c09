#pragma once

#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

namespace rulestream {

// Memory for what a trial store keeps of every record until it goes (the reductions computed as
// records land): taken from large regions, bump-allocated, never freed one by one. The regions
// are aligned to 2 MiB and marked for transparent huge pages (MADV_HUGEPAGE), so a job of a
// million records faults in a few dozen pages rather than tens of thousands of 4 KiB ones
// (a page fault costs ~10 us on a virtual machine; benchmarks/RESULTS.md). Where the kernel has
// no huge pages the regions are ordinary memory. Safe to allocate from many threads at once.
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

  // Bytes of the regions mapped so far (address space; pages count in RSS only once touched).
  std::size_t mapped_bytes() const;

 private:
  std::byte* map_region(std::size_t bytes);

  std::size_t region_bytes_;
  mutable std::mutex mutex_;
  std::vector<std::pair<std::byte*, std::size_t>> regions_;
  std::byte* next_ = nullptr;
  std::byte* end_ = nullptr;
};

}  // namespace rulestream
