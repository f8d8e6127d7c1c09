#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "pipeline/model/tensor_value.hpp"

namespace rulestream {

// Values a rule read at one step, kept for a later step that compares with them: a rule that
// measures each tensor against its previous save (WeightUpdateRatio) finds the previous value
// here rather than looking it up, reading and decoding it again.
//
// A value that is a slice of a file mapping storage keeps (SharedBytes::in_kept_mapping: local
// event files) costs only its handle. Copies (S3, compressed files, values read out of
// recycled buffers: LocalStorage::read_records_range) are held up to a byte budget:
// past it they are not held, and the rule reads them again when it needs them.
//
// Tensors are keyed by the trial's own copy of their name (Tensor::name(), one string per tensor
// for as long as the trial lives), as SavedStepHistory keys them. Not thread-safe: one rule's.
class HeldValues {
 public:
  explicit HeldValues(std::size_t copied_budget_bytes) : budget_(copied_budget_bytes) {}

  // The value of `tensor` held from `step`, handed over (no longer held); nullopt when none is.
  std::optional<TensorValue> take(const std::string* tensor, std::int64_t step);

  // Holds `value` as `tensor`'s at `step`, in place of what was held for it.
  void hold(const std::string* tensor, std::int64_t step, TensorValue value);

  std::size_t size() const { return count_; }
  std::size_t copied_bytes() const { return copied_; }

 private:
  // A tensor's entry stays once made, empty between a take and the next hold: a rule takes and
  // holds every weight at every step, and freeing the node and making it again each time cost a
  // malloc and a free per weight per step.
  struct Held {
    std::int64_t step = 0;
    std::optional<TensorValue> value;  // nullopt: nothing held
    std::size_t copied_bytes = 0;      // what the value counts against the budget
  };

  // Empties an entry, if it holds a value.
  void release(Held& held);

  std::size_t budget_;
  std::size_t copied_ = 0;
  std::size_t count_ = 0;  // entries holding a value
  std::unordered_map<const std::string*, Held> held_;
};

}  // namespace rulestream
