#include "stages/load/landing.hpp"

#include <memory>
#include <type_traits>

namespace rulestream {

namespace {

// Default-constructed objects of T, in the arena.
template <typename T>
std::span<T> arena_array(RecordArena& arena, std::size_t count) {
  static_assert(std::is_trivially_destructible_v<T>, "the arena never runs destructors");
  T* first = static_cast<T*>(arena.allocate(count * sizeof(T), alignof(T)));
  std::uninitialized_value_construct_n(first, count);
  return {first, count};
}

}  // namespace

LandedReductions::LandedReductions(std::size_t count, std::shared_ptr<RecordArena> arena)
    : sets(arena_array<PackedReductions>(*arena, count)),
      records(arena_array<std::uint32_t>(*arena, count)),
      computed(arena_array<std::uint8_t>(*arena, count)),
      tensor_fields(arena_array<std::uint32_t>(*arena, count)),
      arena_(std::move(arena)) {}

}  // namespace rulestream
