#include "pipeline/record_arena.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <new>

namespace rulestream {
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;

std::size_t round_up(std::size_t value, std::size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

}  // namespace

RecordArena::RecordArena(std::size_t region_bytes)
    : region_bytes_(round_up(region_bytes == 0 ? kHugePage : region_bytes, kHugePage)) {}

RecordArena::~RecordArena() {
  for (const auto& [address, bytes] : regions_) ::munmap(address, bytes);
}

std::byte* RecordArena::map_region(std::size_t bytes) {
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
  static_cast<void>(::madvise(start, bytes, MADV_HUGEPAGE));
  regions_.emplace_back(start, bytes);
  return start;
}

void* RecordArena::allocate(std::size_t bytes, std::size_t alignment) {
  if (bytes == 0) bytes = 1;
  std::lock_guard lock(mutex_);
  if (bytes > region_bytes_ / 4) return map_region(round_up(bytes, kHugePage));
  // In integers: a rounded-up address may lie past the region's end.
  const auto end = reinterpret_cast<std::uintptr_t>(end_);
  auto aligned = round_up(reinterpret_cast<std::uintptr_t>(next_), alignment);
  if (next_ == nullptr || aligned > end || end - aligned < bytes) {
    std::byte* region = map_region(region_bytes_);
    end_ = region + region_bytes_;
    aligned = reinterpret_cast<std::uintptr_t>(region);  // 2 MiB aligned
  }
  auto* result = reinterpret_cast<std::byte*>(aligned);
  next_ = result + bytes;
  return result;
}

std::size_t RecordArena::mapped_bytes() const {
  std::lock_guard lock(mutex_);
  std::size_t total = 0;
  for (const auto& region : regions_) total += region.second;
  return total;
}

}  // namespace rulestream
