#include "core/memory/packed_reductions.hpp"

#include <bit>
#include <limits>
#include <new>
#include <type_traits>

namespace rulestream {
namespace {

constexpr std::uint8_t kHasCounts = 1, kHasZeros = 2, kHasNans = 4, kHasInfs = 8;

bool packs_as_float(DType dtype) {
  return dtype == DType::Float32 || dtype == DType::Float16 || dtype == DType::BFloat16;
}

// A count fits when a uint32 holds it; an absent one always does.
bool put_count(const std::optional<std::int64_t>& count, std::uint8_t flag, std::uint32_t& slot,
               std::uint8_t& present) {
  if (!count) return true;
  if (*count < 0 || *count > std::numeric_limits<std::uint32_t>::max()) return false;
  slot = static_cast<std::uint32_t>(*count);
  present |= flag;
  return true;
}

}  // namespace

bool PackedReductions::try_pack(const ReductionSet& set) {
  dtype_ = set.source_dtype();
  if (!packs_as_float(dtype_)) return false;
  present_ = 0;
  // The set's own arrays (what get() reads): a set is packed per record, and going through
  // get() cost more than computing the reductions' sums.
  for (std::size_t i = 0; i < set.bits_.size(); ++i) {
    if (set.dtypes_[i] == DType::Invalid) continue;  // absent
    if (set.dtypes_[i] != dtype_) return false;
    // Every float32, float16 and bfloat16 scalar is exact in a float; the bits are compared
    // anyway, so that even a NaN's payload comes back as it went in.
    const auto narrow = static_cast<float>(std::bit_cast<double>(set.bits_[i]));
    if (std::bit_cast<std::uint64_t>(static_cast<double>(narrow)) != set.bits_[i]) return false;
    storage_.values[i] = narrow;
    present_ |= std::uint32_t{1} << i;
  }
  counts_present_ = 0;
  if (const auto counts = set.counts()) {
    return put_count(counts->elements, kHasCounts, counts_[0], counts_present_) &&
           put_count(counts->zeros, kHasZeros, counts_[1], counts_present_) &&
           put_count(counts->nans, kHasNans, counts_[2], counts_present_) &&
           put_count(counts->infs, kHasInfs, counts_[3], counts_present_);
  }
  return true;
}

void PackedReductions::assign(const ReductionSet& set, RecordArena& arena) {
  wide_ = false;
  if (try_pack(set)) return;
  static_assert(std::is_trivially_destructible_v<ReductionSet>, "the arena runs no destructors");
  void* memory = arena.allocate(sizeof(ReductionSet), alignof(ReductionSet));
  storage_.whole = new (memory) ReductionSet(set);
  wide_ = true;
}

std::optional<Scalar> PackedReductions::get(ReductionKey key) const {
  if (wide_) return storage_.whole->get(key);
  const int i = key.index();
  if ((present_ & (std::uint32_t{1} << i)) == 0) return std::nullopt;
  const double value = storage_.values[static_cast<std::size_t>(i)];
  return Scalar::from_bits(dtype_, std::bit_cast<std::uint64_t>(value));
}

std::optional<ElementCounts> PackedReductions::counts() const {
  if (wide_) return storage_.whole->counts();
  if ((counts_present_ & kHasCounts) == 0) return std::nullopt;
  const auto part = [&](std::uint8_t flag, std::size_t i) -> std::optional<std::int64_t> {
    if ((counts_present_ & flag) == 0) return std::nullopt;
    return counts_[i];
  };
  return ElementCounts{.elements = counts_[0],
                       .zeros = part(kHasZeros, 1),
                       .nans = part(kHasNans, 2),
                       .infs = part(kHasInfs, 3)};
}

DType PackedReductions::source_dtype() const {
  return wide_ ? storage_.whole->source_dtype() : dtype_;
}

ReductionSet PackedReductions::unpack() const {
  if (wide_) return *storage_.whole;
  ReductionSet set;
  set.set_source_dtype(dtype_);
  for (int i = 0; i < kReductionKeyCount; ++i) {
    const ReductionKey key = ReductionKey::from_index(i);
    if (auto value = get(key)) set.set(key, *value);
  }
  if (auto element_counts = counts()) set.set_counts(*element_counts);
  return set;
}

ReductionSet PackedReductions::unpack(std::span<const ReductionKey> keys) const {
  ReductionSet set;
  set.set_source_dtype(source_dtype());
  for (const ReductionKey key : keys) {
    if (auto value = get(key)) set.set(key, *value);
  }
  if (auto element_counts = counts()) set.set_counts(*element_counts);
  return set;
}

}  // namespace rulestream
