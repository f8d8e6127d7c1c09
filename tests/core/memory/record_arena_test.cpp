#include "core/memory/record_arena.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace rulestream {
namespace {

bool all_zero(const void* memory, std::size_t bytes) {
  const auto* first = static_cast<const unsigned char*>(memory);
  return std::all_of(first, first + bytes, [](unsigned char c) { return c == 0; });
}

TEST(RecordArenaTest, AllocationsAreAlignedZeroedAndDisjoint) {
  RecordArena arena(4 << 20);
  std::vector<std::pair<std::uintptr_t, std::size_t>> taken;
  for (std::size_t i = 0; i < 2000; ++i) {
    const std::size_t bytes = 1 + (i * 7919) % 5000;
    const std::size_t alignment = std::size_t{1} << (i % 7);  // 1 .. 64
    void* memory = arena.allocate(bytes, alignment);
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(memory) % alignment, 0u) << i;
    ASSERT_TRUE(all_zero(memory, bytes)) << i;
    std::memset(memory, 0xab, bytes);  // writable, and a later overlap would show as non-zero
    taken.emplace_back(reinterpret_cast<std::uintptr_t>(memory), bytes);
  }
  std::sort(taken.begin(), taken.end());
  for (std::size_t i = 1; i < taken.size(); ++i) {
    EXPECT_GE(taken[i].first, taken[i - 1].first + taken[i - 1].second) << i;
  }
  // 2000 requests of ~2.5 KB on average: about 5 MB, so more than one 4 MiB region.
  EXPECT_GE(arena.mapped_bytes(), std::size_t{8} << 20);
}

TEST(RecordArenaTest, ALargeRequestGetsARegionOfItsOwn) {
  RecordArena arena(4 << 20);
  void* small = arena.allocate(100, 8);
  void* large = arena.allocate(3 << 20, 8);  // more than a quarter region
  ASSERT_TRUE(all_zero(large, 3 << 20));
  void* after = arena.allocate(100, 8);
  // The small region goes on being used after the large one.
  EXPECT_EQ(static_cast<char*>(after), static_cast<char*>(small) + 104);
  EXPECT_EQ(arena.mapped_bytes(), (std::size_t{4} << 20) + (std::size_t{4} << 20));
}

TEST(RecordArenaTest, RegionsStartOnHugePageBoundaries) {
  RecordArena arena(2 << 20);
  // The first allocation of a region is its start; one over a quarter region is a region.
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(arena.allocate(10, 8)) % (2 << 20), 0u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(arena.allocate(1 << 20, 8)) % (2 << 20), 0u);
  }
}

// Once the first region fills, an idle-priority thread maps and faults in the next one ahead;
// the arena moves on to it, and what it hands out from there is zeroed and aligned like the rest.
TEST(RecordArenaTest, RegionsFaultedInAheadAreUsedAndZeroed) {
  RecordArena arena(2 << 20);
  std::set<std::uintptr_t> regions;
  const auto take = [&](int i) {
    void* memory = arena.allocate(400 << 10, 64);
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(memory) % 64, 0u);
    ASSERT_TRUE(all_zero(memory, 400 << 10)) << i;
    std::memset(memory, 0x5a, 400 << 10);
    regions.insert(reinterpret_cast<std::uintptr_t>(memory) / (2 << 20));
  };
  // 400 KiB at a time: five to a 2 MiB region. The sixth moves on to a region allocate() maps
  // itself, and asks for a spare.
  EXPECT_FALSE(arena.wait_for_spare()) << "nothing asked for one yet";
  for (int i = 0; i < 6; ++i) take(i);
  EXPECT_EQ(arena.spares_used(), 0u);
  // Each further five take the spare made meanwhile, and ask for the next.
  for (std::size_t spare = 1; spare <= 2; ++spare) {
    ASSERT_TRUE(arena.wait_for_spare());
    for (int i = 0; i < 5; ++i) take(static_cast<int>(spare * 10) + i);
    EXPECT_EQ(arena.spares_used(), spare);
  }
  EXPECT_EQ(regions.size(), 4u);
  // Every region handed out is mapped, and the one spare made ahead of them.
  ASSERT_TRUE(arena.wait_for_spare());
  EXPECT_EQ(arena.mapped_bytes(), (regions.size() + 1) * (std::size_t{2} << 20));
}

// What /proc/self/smaps says of the mapping that holds `address`: whether the kernel may back it
// with huge pages ("THPeligible"); nullopt when it says nothing (no such line, no such mapping).
std::optional<bool> huge_pages_eligible(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  bool inside = false;
  std::string line;
  while (std::getline(smaps, line)) {
    std::uintptr_t start = 0;
    std::uintptr_t end = 0;
    char dash = 0;
    std::istringstream header(line);
    if (header >> std::hex >> start >> dash >> end && dash == '-') {
      inside = start <= at && at < end;
      continue;
    }
    if (inside && line.starts_with("THPeligible:")) {
      return line.find('1') != std::string::npos;
    }
  }
  return std::nullopt;
}

bool huge_pages_enabled() {
  std::ifstream enabled("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(enabled, modes);
  return !modes.empty() && modes.find("[never]") == std::string::npos;
}

// Regions the arena maps as it needs them take 4 KiB pages; those its idle thread faults in ahead
// take huge pages where the kernel has them. A huge page zeroed on the critical path of a busy
// replay cost more than the TLB misses it saves (benchmarks/RESULTS.md, "Huge pages only where
// they are faulted in ahead").
TEST(RecordArenaTest, OnlyRegionsFaultedInAheadAskForHugePages) {
  if (!huge_pages_enabled()) GTEST_SKIP() << "transparent huge pages are off on this machine";
  {
    RecordArena small(2 << 20);  // a small allocation maps the first region too
    const void* first = small.allocate(64, 8);
    const std::optional<bool> first_eligible = huge_pages_eligible(first);
    if (!first_eligible) GTEST_SKIP() << "smaps says nothing of huge pages here";
    EXPECT_FALSE(*first_eligible) << "the first region is mapped when it is needed";
  }
  RecordArena arena(2 << 20);

  // Six of 400 KiB fill the first region and move on to a second that allocate() maps itself.
  const void* second = nullptr;
  for (int i = 0; i < 6; ++i) second = arena.allocate(400 << 10, 64);
  EXPECT_EQ(huge_pages_eligible(second), std::optional<bool>(false)) << "mapped when needed";
  ASSERT_TRUE(arena.wait_for_spare());
  // The allocation that moves the arena on to the spare sits at the spare's start.
  const void* in_spare = nullptr;
  for (int i = 0; i < 5; ++i) in_spare = arena.allocate(400 << 10, 64);
  ASSERT_EQ(arena.spares_used(), 1u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(in_spare) % (2 << 20), 0u);
  EXPECT_EQ(huge_pages_eligible(in_spare), std::optional<bool>(true));
}

// An arena that goes while its thread is faulting a spare in stops the thread first (a thread
// left running would fault pages of unmapped memory: the sanitizer builds and a crash tell).
// What it handed out meanwhile is whole and apart.
TEST(RecordArenaTest, GoesCleanlyWhileASpareIsBeingMade) {
  for (int i = 0; i < 20; ++i) {
    RecordArena arena(8 << 20);
    std::vector<unsigned char*> blocks;
    for (int j = 0; j < 5; ++j) {
      auto* block = static_cast<unsigned char*>(arena.allocate(2 << 20, 8));  // into region two
      std::memset(block, j + 1, 2 << 20);
      blocks.push_back(block);
    }
    for (std::size_t j = 0; j < blocks.size(); ++j) {
      ASSERT_EQ(blocks[j][0], j + 1) << "block " << j << " was overwritten";
      ASSERT_EQ(blocks[j][(2 << 20) - 1], j + 1) << "block " << j << " was overwritten";
    }
  }
}

TEST(RecordArenaTest, ThreadsAllocateConcurrentlyWithoutOverlap) {
  RecordArena arena(2 << 20);
  constexpr int kThreads = 4;
  constexpr int kEach = 5000;
  std::vector<std::vector<std::uintptr_t>> taken(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        auto* memory = static_cast<unsigned char*>(arena.allocate(64, 8));
        memory[0] = static_cast<unsigned char>(t + 1);
        taken[t].push_back(reinterpret_cast<std::uintptr_t>(memory));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  std::set<std::uintptr_t> all;
  for (int t = 0; t < kThreads; ++t) {
    for (const std::uintptr_t address : taken[t]) {
      EXPECT_EQ(*reinterpret_cast<unsigned char*>(address), t + 1);
      all.insert(address);
    }
  }
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kThreads * kEach));
}

// Small allocations come from a chunk the thread keeps per arena: an arena made where a freed
// one lived (the same address, likely) must not hand out the freed one's chunk, whose memory is
// gone (writing to it would fault), and two arenas used in turn keep their chunks apart.
TEST(RecordArenaTest, EachArenaHandsOutItsOwnMemoryFromAThreadsChunks) {
  for (int round = 0; round < 4; ++round) {
    auto arena = std::make_unique<RecordArena>(2 << 20);
    auto* memory = static_cast<unsigned char*>(arena->allocate(64, 8));
    ASSERT_TRUE(all_zero(memory, 64));
    std::memset(memory, 0x5a, 64);
  }
  RecordArena first(2 << 20);
  RecordArena second(2 << 20);
  std::set<std::uintptr_t> first_regions;
  std::set<std::uintptr_t> second_regions;
  for (int i = 0; i < 3000; ++i) {  // past a chunk each
    auto* a = static_cast<unsigned char*>(first.allocate(48, 16));
    auto* b = static_cast<unsigned char*>(second.allocate(48, 16));
    ASSERT_TRUE(all_zero(a, 48)) << i;
    ASSERT_TRUE(all_zero(b, 48)) << i;
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(a) % 16, 0u);
    std::memset(a, 1, 48);
    std::memset(b, 2, 48);
    first_regions.insert(reinterpret_cast<std::uintptr_t>(a) / (2 << 20));
    second_regions.insert(reinterpret_cast<std::uintptr_t>(b) / (2 << 20));
  }
  for (const std::uintptr_t region : first_regions) EXPECT_FALSE(second_regions.contains(region));
}

// A thread's chunk is small while the arena has handed out little (a small job's store, one of
// many a service keeps, wastes at most that much per thread that moves on), and grows with it.
TEST(RecordArenaTest, ChunksGrowWithWhatTheArenaHandedOut) {
  RecordArena arena(2 << 20);
  const auto first = reinterpret_cast<std::uintptr_t>(arena.allocate(64, 8));
  std::uintptr_t other = 0;
  std::thread([&] { other = reinterpret_cast<std::uintptr_t>(arena.allocate(64, 8)); }).join();
  EXPECT_EQ(other - first, RecordArena::kFirstChunkBytes);  // the first thread's chunk is 2 KiB
  // 1 MiB more handed out in large pieces: a new thread's chunk is now a 64th of it all.
  for (int i = 0; i < 4; ++i) arena.allocate(256 << 10, 64);
  std::uintptr_t third = 0;
  std::uintptr_t fourth = 0;
  std::thread([&] { third = reinterpret_cast<std::uintptr_t>(arena.allocate(64, 8)); }).join();
  std::thread([&] { fourth = reinterpret_cast<std::uintptr_t>(arena.allocate(64, 8)); }).join();
  // Handed out before the third thread's chunk: two chunks of 2,048 and 4 x 262,144 bytes,
  // 1,052,672 in all; a 64th of it is 16,448, a multiple of 64 already. The fourth thread's
  // chunk follows the third's.
  EXPECT_EQ(fourth - third, 16448u);
}

TEST(ArenaAllocatorTest, AVectorWithAnArenaGrowsInsideIt) {
  RecordArena arena(2 << 20);
  std::vector<std::string, ArenaAllocator<std::string>> names{ArenaAllocator<std::string>(&arena)};
  for (int i = 0; i < 1000; ++i)
    names.push_back("a name longer than fifteen characters " + std::to_string(i));
  EXPECT_EQ(names[999], "a name longer than fifteen characters 999");
  EXPECT_EQ(names.get_allocator().arena(), &arena);
  // Growth from 1 to 1024 elements: about twice the final size, all of it in the arena.
  EXPECT_EQ(arena.mapped_bytes(), std::size_t{2} << 20);
}

TEST(ArenaAllocatorTest, WithoutAnArenaItIsTheHeapAndAssignmentTakesTheArena) {
  RecordArena arena(2 << 20);
  std::vector<int, ArenaAllocator<int>> plain;  // no arena yet, as a default-made TensorHistory
  plain.assign(100, 7);
  EXPECT_EQ(plain.get_allocator().arena(), nullptr);
  EXPECT_EQ(arena.mapped_bytes(), 0u);
  plain = std::vector<int, ArenaAllocator<int>>(ArenaAllocator<int>(&arena));
  plain.assign(100, 8);
  EXPECT_EQ(plain.get_allocator().arena(), &arena);
  EXPECT_EQ(arena.mapped_bytes(), std::size_t{2} << 20);
  // Moved containers keep their memory and allocator.
  auto moved = std::move(plain);
  EXPECT_EQ(moved.get_allocator().arena(), &arena);
  EXPECT_EQ(moved[99], 8);
}

}  // namespace
}  // namespace rulestream
