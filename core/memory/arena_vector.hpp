#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include "core/memory/record_arena.hpp"

namespace rulestream {

// A growable array in a RecordArena, held by one pointer: for what a trial store keeps per
// record and per tensor step (millions of each), where a std::vector with an arena allocator
// takes 32 bytes before its first element. The count and capacity sit in the block, right before
// the elements, so reading them costs no cache line the elements do not.
//
// Copies share the block: they are views, valid while the arena lives, and they see what is
// pushed or changed in it later. An owner whose readers keep copies past its lock must give
// them a block of their own before changing it (copied_to). Growing moves the elements to a
// block twice the size and leaves the old one to the arena, which frees everything at once.
// Elements must be trivially copyable and destructible (moved with memcpy, never destroyed).
template <typename T>
class ArenaVector {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  bool empty() const { return size() == 0; }
  std::size_t size() const { return block_ == nullptr ? 0 : block_->size; }

  T* begin() { return items(); }
  T* end() { return items() + size(); }
  const T* begin() const { return items(); }
  const T* end() const { return items() + size(); }
  T& front() { return items()[0]; }
  const T& front() const { return items()[0]; }
  T& back() { return items()[size() - 1]; }
  const T& back() const { return items()[size() - 1]; }

  // Room for `count` elements in all, so that as many push_backs take no new block. Throws
  // std::length_error past 2^32 - 1 elements (the count is 32 bits).
  void reserve(std::size_t count, RecordArena& arena) {
    if (count <= capacity()) return;
    if (count > std::numeric_limits<std::uint32_t>::max()) {
      throw std::length_error("ArenaVector: more than 2^32 - 1 elements");
    }
    auto* grown = static_cast<Block*>(
        arena.allocate(kItemsOffset + count * sizeof(T), std::max(alignof(Block), alignof(T))));
    grown->size = static_cast<std::uint32_t>(size());
    grown->capacity = static_cast<std::uint32_t>(count);
    if (block_ != nullptr) std::memcpy(items_of(grown), items(), size() * sizeof(T));
    block_ = grown;
  }

  // The elements in a block of their own, with room for one more: copies made before no longer
  // see what changes in this one.
  ArenaVector copied_to(RecordArena& arena) const {
    ArenaVector copy;
    if (empty()) return copy;
    copy.reserve(size() + 1, arena);
    std::memcpy(items_of(copy.block_), items(), size() * sizeof(T));
    copy.block_->size = block_->size;
    return copy;
  }

  T& push_back(const T& value, RecordArena& arena) {
    if (size() == capacity()) reserve(std::max<std::size_t>(2 * capacity(), 1), arena);
    T* slot = items() + block_->size;
    *slot = value;
    ++block_->size;
    return *slot;
  }

 private:
  struct Block {
    std::uint32_t size;
    std::uint32_t capacity;
  };
  static constexpr std::size_t kItemsOffset =
      (sizeof(Block) + alignof(T) - 1) / alignof(T) * alignof(T);

  static T* items_of(Block* block) {
    return reinterpret_cast<T*>(reinterpret_cast<std::byte*>(block) + kItemsOffset);
  }
  std::size_t capacity() const { return block_ == nullptr ? 0 : block_->capacity; }
  T* items() const { return block_ == nullptr ? nullptr : items_of(block_); }

  Block* block_ = nullptr;
};

}  // namespace rulestream
