// The whole-file mappings LocalStorage keeps: found by path while they cover what is asked,
// the least recently used leaving first, and alive while bytes cut from them are in use.

#include "sources/local/mapped_files.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace rulestream {
namespace {

SharedBytes mapping_of(std::size_t size, std::weak_ptr<const void>* owner_out = nullptr) {
  auto owner = std::make_shared<std::vector<std::byte>>(size);
  if (owner_out != nullptr) *owner_out = owner;
  return SharedBytes::of_kept_mapping(owner, std::span<const std::byte>(*owner));
}

TEST(MappedFilesTest, FindsAMappingThatCoversTheRange) {
  MappedFiles files(4);
  EXPECT_FALSE(files.find("events/a", 1).has_value());
  const SharedBytes a = mapping_of(100);
  files.keep("events/a", a);
  ASSERT_TRUE(files.find("events/a", 100).has_value());
  EXPECT_EQ(files.find("events/a", 100)->data(), a.data());
  EXPECT_FALSE(files.find("events/a", 101).has_value()) << "the file grew past the mapping";
  EXPECT_FALSE(files.find("events/b", 1).has_value());
  // A newer mapping of the same file replaces the older one.
  const SharedBytes longer = mapping_of(200);
  files.keep("events/a", longer);
  EXPECT_EQ(files.find("events/a", 150)->data(), longer.data());
  EXPECT_EQ(files.size(), 1u);
}

TEST(MappedFilesTest, TheLeastRecentlyUsedLeavesFirst) {
  MappedFiles files(2);
  std::weak_ptr<const void> a_owner;
  files.keep("a", mapping_of(10, &a_owner));
  files.keep("b", mapping_of(10));
  ASSERT_TRUE(files.find("a", 1).has_value());  // a is now the most recent
  files.keep("c", mapping_of(10));
  EXPECT_TRUE(files.find("a", 1).has_value());
  EXPECT_FALSE(files.find("b", 1).has_value());
  EXPECT_TRUE(files.find("c", 1).has_value());
  EXPECT_EQ(files.size(), 2u);

  // Bytes in use keep a mapping that left alive; then it goes.
  std::optional<SharedBytes> slice = files.find("a", 1)->slice(2, 3);
  files.keep("d", mapping_of(10));
  files.keep("e", mapping_of(10));
  EXPECT_FALSE(files.find("a", 1).has_value());
  EXPECT_FALSE(a_owner.expired());
  EXPECT_EQ(slice->size(), 3u);
  slice.reset();
  EXPECT_TRUE(a_owner.expired());
}

// An interactive reader keeps hundreds (StorageOptions::local_kept_mappings): each is found by
// its path, and the oldest leave once the capacity is full.
TEST(MappedFilesTest, KeepsHundredsOfFilesEachFoundByPath) {
  MappedFiles files(500);
  std::vector<SharedBytes> kept;
  for (int i = 0; i < 600; ++i) {
    kept.push_back(mapping_of(static_cast<std::size_t>(i) + 1));
    files.keep("events/" + std::to_string(i), kept.back());
  }
  EXPECT_EQ(files.size(), 500u);
  for (int i = 0; i < 100; ++i) {
    EXPECT_FALSE(files.find("events/" + std::to_string(i), 1).has_value()) << i;
  }
  for (int i = 100; i < 600; ++i) {
    const auto found = files.find("events/" + std::to_string(i), 1);
    ASSERT_TRUE(found.has_value()) << i;
    EXPECT_EQ(found->data(), kept[static_cast<std::size_t>(i)].data()) << i;
  }
  // Replacing a kept file's mapping keeps one entry for it, found by the same path.
  const SharedBytes again = mapping_of(1000);
  files.keep("events/300", again);
  EXPECT_EQ(files.size(), 500u);
  EXPECT_EQ(files.find("events/300", 1000)->data(), again.data());
}

// A file read piece by piece is worth mapping: its second read among the last `capacity`
// unmapped ones says so; once it is older than that, it counts as new again.
TEST(MappedFilesTest, ASecondUnmappedReadWithinTheCapacityAsksForAMapping) {
  MappedFiles files(3);
  EXPECT_FALSE(files.note_unmapped_read("a"));
  EXPECT_FALSE(files.note_unmapped_read("b"));
  EXPECT_TRUE(files.note_unmapped_read("a"));
  EXPECT_FALSE(files.note_unmapped_read("c"));
  EXPECT_FALSE(files.note_unmapped_read("d"));  // "a", the oldest noted, leaves
  EXPECT_FALSE(files.note_unmapped_read("a"));  // noted anew ("b" leaves)
  EXPECT_TRUE(files.note_unmapped_read("c"));
  EXPECT_TRUE(files.note_unmapped_read("d"));
  EXPECT_FALSE(files.note_unmapped_read("b"));
}

// A handle is the path's own slot: it sees the mapping kept for the path, kept before or after
// the handle was made, and slices only what that mapping covers.
TEST(MappedFilesTest, AHandleSlicesThePathsKeptMapping) {
  MappedFiles files(4);
  const MappedFiles::Handle before = files.handle("events/a");
  EXPECT_FALSE(before.slice(0, 1).has_value()) << "nothing kept yet";
  const SharedBytes a = mapping_of(100);
  files.keep("events/a", a);
  const MappedFiles::Handle after = files.handle("events/a");
  for (const MappedFiles::Handle* handle : {&before, &after}) {
    const auto slice = handle->slice(10, 90);
    ASSERT_TRUE(slice.has_value());
    EXPECT_EQ(slice->data(), a.data() + 10);
    EXPECT_EQ(slice->size(), 90u);
    EXPECT_FALSE(handle->slice(10, 91).has_value()) << "past the mapped end";
    EXPECT_FALSE(handle->slice(~std::uint64_t{0}, 2).has_value()) << "offset + length overflows";
  }
  EXPECT_FALSE(files.handle("events/b").slice(0, 1).has_value());
  // A newer mapping of the file replaces the older one under the same handle.
  const SharedBytes longer = mapping_of(200);
  files.keep("events/a", longer);
  EXPECT_EQ(before.slice(150, 50)->data(), longer.data() + 150);
  EXPECT_EQ(files.size(), 1u) << "a handle keeps nothing of its own";
}

// A mapping that leaves the list is gone for its handles too (the capacity holds however many
// handles there are), and handles outlive the MappedFiles that made them, finding nothing.
TEST(MappedFilesTest, AHandleFindsNothingOnceItsMappingLeft) {
  std::weak_ptr<const void> a_owner;
  std::optional<MappedFiles::Handle> handle;
  {
    MappedFiles files(1);
    handle = files.handle("a");
    files.keep("a", mapping_of(10, &a_owner));
    ASSERT_TRUE(handle->slice(0, 10).has_value());
    files.keep("b", mapping_of(10));  // capacity 1: "a" leaves
    EXPECT_FALSE(handle->slice(0, 10).has_value());
    EXPECT_TRUE(a_owner.expired());
    files.keep("a", mapping_of(10, &a_owner));  // mapped again: the same handle sees it
    EXPECT_TRUE(handle->slice(0, 10).has_value());
    EXPECT_EQ(files.size(), 1u);
  }
  EXPECT_FALSE(handle->slice(0, 10).has_value());
  EXPECT_TRUE(a_owner.expired()) << "the mapping went with its MappedFiles";
}

// Reads through a handle do not move their entry in the LRU list (that would take the lock of
// every file); they mark it, and the entry at the back that was read so gets a second chance at
// the front when the next mapping is kept.
TEST(MappedFilesTest, AnEntryReadThroughAHandleGetsASecondChance) {
  MappedFiles files(2);
  const MappedFiles::Handle a = files.handle("a");
  files.keep("a", mapping_of(10));
  files.keep("b", mapping_of(10));  // list: b, a
  ASSERT_TRUE(a.slice(0, 1).has_value());
  files.keep("c", mapping_of(10));  // a is read: it goes to the front, b leaves
  EXPECT_FALSE(files.find("b", 1).has_value());
  // Found by path (which moves them, and leaves a's mark spent): list c, a.
  EXPECT_TRUE(files.find("a", 1).has_value());
  EXPECT_TRUE(files.find("c", 1).has_value());
  files.keep("d", mapping_of(10));  // a, not read since, leaves
  EXPECT_FALSE(a.slice(0, 1).has_value());
  EXPECT_TRUE(files.find("c", 1).has_value());
  EXPECT_TRUE(files.find("d", 1).has_value());

  // Every entry read through handles: each gets one second chance, then the oldest leaves.
  MappedFiles all(2);
  const MappedFiles::Handle x = all.handle("x");
  const MappedFiles::Handle y = all.handle("y");
  all.keep("x", mapping_of(10));
  all.keep("y", mapping_of(10));  // list: y, x
  ASSERT_TRUE(x.slice(0, 1).has_value());
  ASSERT_TRUE(y.slice(0, 1).has_value());
  // x, then y, go to the front with their marks spent (list: y, x), and x, the back, leaves.
  all.keep("z", mapping_of(10));
  EXPECT_EQ(all.size(), 2u);
  EXPECT_TRUE(all.find("z", 1).has_value());
  EXPECT_FALSE(x.slice(0, 1).has_value());
  EXPECT_TRUE(y.slice(0, 1).has_value());
}

// Handles on different files are read from many threads while mappings are kept and leave: each
// slice is of the mapping kept for its path (its bytes say which), never another's.
TEST(MappedFilesTest, HandlesAreReadConcurrentlyWithKeepsAndEvictions) {
  MappedFiles files(2);
  auto filled = [](std::size_t path) {
    auto owner = std::make_shared<std::vector<std::byte>>(64, static_cast<std::byte>(path));
    return SharedBytes::of_kept_mapping(owner, std::span<const std::byte>(*owner));
  };
  std::vector<std::thread> readers;
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  for (std::size_t path = 0; path < 4; ++path) {
    readers.emplace_back([&, path, handle = files.handle("f" + std::to_string(path))] {
      while (!stop.load()) {
        if (const auto slice = handle.slice(8, 8)) {
          if (slice->span()[7] != static_cast<std::byte>(path)) ++wrong;
        }
      }
    });
  }
  for (int round = 0; round < 2000; ++round) {
    const auto path = static_cast<std::size_t>(round % 4);
    files.keep("f" + std::to_string(path), filled(path));
  }
  stop = true;
  for (std::thread& reader : readers) reader.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(files.size(), 2u);
}

}  // namespace
}  // namespace rulestream
