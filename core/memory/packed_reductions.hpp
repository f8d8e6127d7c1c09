#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>

#include "core/memory/record_arena.hpp"
#include "core/model/reduction.hpp"
#include "core/model/reduction_set.hpp"

namespace rulestream {

// A ReductionSet as a trial store keeps one for every record of a job, in 96 bytes rather than
// 200. Fresh memory is what a small-tensor replay spends most on (every page of it faulted in
// and zeroed; on the development VM the sets alone were 14% of a replay's samples), and nearly
// every tensor a training job saves is float32, float16 or bfloat16, whose eighteen reductions
// are all numbers of the tensor's own dtype, each exact in a float.
//
// Such a set, of a tensor of fewer than 2^32 elements, is packed: eighteen floats and 32-bit
// element counts. Any other set (integers, float64, a huge tensor, a reduction in another
// dtype) is copied whole into the arena and this points at it. Either way, get(), counts() and
// unpack() give back exactly the set that was assigned.
class PackedReductions {
 public:
  // Keeps `set`; a set that does not pack is copied into `arena`, which must outlive this.
  void assign(const ReductionSet& set, RecordArena& arena);

  std::optional<Scalar> get(ReductionKey key) const;
  std::optional<ElementCounts> counts() const;
  DType source_dtype() const;
  ReductionSet unpack() const;
  // The set with only the reductions `keys` (and the counts and source dtype): for a reader of a
  // few figures of every tensor at every step, who would otherwise unpack all eighteen.
  ReductionSet unpack(std::span<const ReductionKey> keys) const;

  // Whether the set was packed (false: it sits whole in the arena). For tests.
  bool packed() const { return !wide_; }

 private:
  // Packs `set` into this; false (this partly written) when it does not pack.
  bool try_pack(const ReductionSet& set);

  union Storage {
    // Packed: the values by ReductionKey::index(), those whose bit in present_ is set.
    std::array<float, kReductionKeyCount> values;
    const ReductionSet* whole;  // not packed
  };
  Storage storage_{.values = {}};
  std::uint32_t present_ = 0;
  // elements, zeros, nans, infs; counts_present_ says which (kHasCounts, ... below).
  std::array<std::uint32_t, 4> counts_{};
  std::uint8_t counts_present_ = 0;
  DType dtype_ = DType::Invalid;  // the tensor's, and every packed value's
  bool wide_ = false;             // storage_ holds `whole`
};

static_assert(sizeof(PackedReductions) <= 96, "a packed set is kept for every record of a job");

}  // namespace rulestream
