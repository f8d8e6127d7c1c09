// The whole-file mappings LocalStorage keeps: found by path while they cover what is asked,
// the least recently used leaving first, and alive while bytes cut from them are in use.

#include "sources/local/mapped_files.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
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

}  // namespace
}  // namespace rulestream
