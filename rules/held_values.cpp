#include "rules/held_values.hpp"

#include <utility>

namespace rulestream {

std::optional<TensorValue> HeldValues::take(const std::string* tensor, std::int64_t step) {
  const auto found = held_.find(tensor);
  if (found == held_.end() || found->second.step != step) return std::nullopt;
  std::optional<TensorValue> value(std::move(found->second.value));
  copied_ -= found->second.copied_bytes;
  held_.erase(found);
  return value;
}

void HeldValues::hold(const std::string* tensor, std::int64_t step, TensorValue value) {
  const std::size_t copied = value.bytes().in_kept_mapping() ? 0 : value.bytes().size();
  const auto found = held_.find(tensor);
  if (found != held_.end()) {
    copied_ -= found->second.copied_bytes;
    held_.erase(found);
  }
  if (copied > budget_ - copied_) return;  // read again when it is needed
  copied_ += copied;
  held_.emplace(tensor, Held{step, std::move(value), copied});
}

}  // namespace rulestream
