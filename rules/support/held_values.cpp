#include "rules/support/held_values.hpp"

#include <utility>

namespace rulestream {

std::optional<TensorValue> HeldValues::take(Slot& slot, std::int64_t step) {
  if (!slot.value || slot.step != step) return std::nullopt;
  // Moved out, the slot's optional is still engaged (with an empty value): release empties it.
  std::optional<TensorValue> value = std::move(slot.value);
  release(slot);
  return value;
}

void HeldValues::hold(Slot& slot, std::int64_t step, TensorValue value) {
  const std::size_t copied = value.bytes().in_kept_mapping() ? 0 : value.bytes().size();
  release(slot);
  // Counted before it is held: two threads never both fit in what is left for one.
  if (copied > 0) {
    std::size_t before = copied_.load(std::memory_order_relaxed);
    do {
      if (copied > budget_ - before) return;  // read again when it is needed
    } while (!copied_.compare_exchange_weak(before, before + copied, std::memory_order_relaxed));
  }
  slot.step = step;
  slot.value = std::move(value);
  slot.copied_bytes = copied;
  count_.fetch_add(1, std::memory_order_relaxed);
}

void HeldValues::release(Slot& slot) {
  if (!slot.value) return;
  copied_.fetch_sub(slot.copied_bytes, std::memory_order_relaxed);
  slot.copied_bytes = 0;
  slot.value.reset();
  count_.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace rulestream
