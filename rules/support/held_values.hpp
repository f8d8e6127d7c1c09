#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/model/tensor_value.hpp"

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
// for as long as the trial lives), as TensorStates keys a rule's state.
//
// Concurrency: slot() from one thread at a time (a rule's). take() and
// hold() on slots from any threads at once, each slot from one thread at a time: a rule that
// moves each tensor on in parallel ranges takes its slots first, then works on them (the byte
// budget is shared atomically, and which copies fit it then depends on the threads' timing;
// what is not held is read again, so only the cost changes).
class HeldValues {
 public:
  // One tensor's entry: made once, empty between a take and the next hold (a rule takes and
  // holds every weight at every step, and freeing the node and making it again each time cost a
  // malloc and a free per weight per step).
  struct Slot {
    std::int64_t step = 0;
    std::optional<TensorValue> value;  // nullopt: nothing held
    std::size_t copied_bytes = 0;      // what the value counts against the budget
  };

  explicit HeldValues(std::size_t copied_budget_bytes) : budget_(copied_budget_bytes) {}
  HeldValues(const HeldValues&) = delete;
  HeldValues& operator=(const HeldValues&) = delete;

  // `tensor`'s slot, made the first time. Its address stays valid for the HeldValues' life.
  Slot& slot(const std::string* tensor) { return held_[tensor]; }

  // The value held in `slot` from `step`, handed over (no longer held); nullopt when none is.
  std::optional<TensorValue> take(Slot& slot, std::int64_t step);
  // Holds `value` as the slot's at `step`, in place of what was held there.
  void hold(Slot& slot, std::int64_t step, TensorValue value);

  std::size_t size() const { return count_.load(std::memory_order_relaxed); }
  std::size_t copied_bytes() const { return copied_.load(std::memory_order_relaxed); }

 private:
  // Empties a slot, if it holds a value.
  void release(Slot& slot);

  const std::size_t budget_;
  std::atomic<std::size_t> copied_{0};
  std::atomic<std::size_t> count_{0};  // slots holding a value
  std::unordered_map<const std::string*, Slot> held_;
};

}  // namespace rulestream
