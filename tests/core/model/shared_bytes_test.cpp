#include "core/model/shared_bytes.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <vector>

namespace rulestream {
namespace {

// A mapping-like owner the test can watch: its use count says who holds it.
struct WatchedOwner {
  std::shared_ptr<const std::vector<std::byte>> buffer =
      std::make_shared<const std::vector<std::byte>>(64, std::byte{7});
  std::span<const std::byte> bytes() const { return {buffer->data(), buffer->size()}; }
};

TEST(SharedBytes, ASliceSharesItsOwnerAndKeepsWhatItCameFrom) {
  WatchedOwner owner;
  const SharedBytes mapped = SharedBytes::of_kept_mapping(owner.buffer, owner.bytes());
  const SharedBytes part = mapped.slice(8, 16);
  EXPECT_EQ(part.data(), owner.buffer->data() + 8);
  EXPECT_EQ(part.size(), 16u);
  EXPECT_EQ(part.owner_size(), 64u);
  EXPECT_TRUE(part.in_kept_mapping());
  EXPECT_EQ(owner.buffer.use_count(), 3);  // the test, mapped, part
  EXPECT_THROW(mapped.slice(60, 8), std::out_of_range);
}

// Slices cut from a copy counted apart take their references from it, not from the owner,
// which the copy holds once; the bytes, and what they say of where they came from, are the same.
TEST(SharedBytes, SlicesOfACopyCountedApartLeaveTheOwnersCountAlone) {
  WatchedOwner owner;
  const SharedBytes mapped = SharedBytes::of_kept_mapping(owner.buffer, owner.bytes());
  const SharedBytes apart = mapped.slice(4, 40).counted_apart();
  EXPECT_EQ(owner.buffer.use_count(), 3);  // the test, mapped, apart's one reference
  EXPECT_EQ(apart.data(), owner.buffer->data() + 4);
  EXPECT_EQ(apart.size(), 40u);
  EXPECT_EQ(apart.owner_size(), 64u);
  EXPECT_TRUE(apart.in_kept_mapping());
  EXPECT_TRUE(apart.from_local_file());

  std::vector<SharedBytes> slices;
  for (std::size_t i = 0; i < 10; ++i) slices.push_back(apart.slice(i, 4));
  EXPECT_EQ(owner.buffer.use_count(), 3);
  EXPECT_EQ(slices[9].data(), owner.buffer->data() + 13);
  EXPECT_TRUE(slices[9].in_kept_mapping());
}

// The owner lives as long as any slice of the copy counted apart, whoever else let it go.
TEST(SharedBytes, ACopyCountedApartKeepsTheOwnerAliveThroughItsSlices) {
  std::weak_ptr<const std::vector<std::byte>> watched;
  SharedBytes slice;
  {
    WatchedOwner owner;
    watched = owner.buffer;
    slice = SharedBytes::of_kept_mapping(owner.buffer, owner.bytes()).counted_apart().slice(2, 3);
  }
  ASSERT_FALSE(watched.expired());
  EXPECT_EQ(slice.span()[0], std::byte{7});
  slice = SharedBytes();
  EXPECT_TRUE(watched.expired());
}

TEST(SharedBytes, EmptyBytesCountedApartStayEmpty) {
  const SharedBytes none;
  const SharedBytes apart = none.counted_apart();
  EXPECT_TRUE(apart.empty());
  EXPECT_EQ(apart.owner_size(), 0u);
}

}  // namespace
}  // namespace rulestream
