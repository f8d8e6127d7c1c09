#include "rules/held_values.hpp"

#include <utility>

namespace rulestream {

std::optional<TensorValue> HeldValues::take(const std::string* tensor, std::int64_t step) {
  const auto found = held_.find(tensor);
  if (found == held_.end() || !found->second.value || found->second.step != step) {
    return std::nullopt;
  }
  // Moved out, the entry's optional is still engaged (with an empty value): release empties it.
  std::optional<TensorValue> value = std::move(found->second.value);
  release(found->second);
  return value;
}

void HeldValues::hold(const std::string* tensor, std::int64_t step, TensorValue value) {
  const std::size_t copied = value.bytes().in_kept_mapping() ? 0 : value.bytes().size();
  Held& held = held_[tensor];
  release(held);
  if (copied > budget_ - copied_) return;  // read again when it is needed
  held.step = step;
  held.value = std::move(value);
  held.copied_bytes = copied;
  copied_ += copied;
  ++count_;
}

void HeldValues::release(Held& held) {
  if (!held.value) return;
  copied_ -= held.copied_bytes;
  held.copied_bytes = 0;
  held.value.reset();
  --count_;
}

}  // namespace rulestream
