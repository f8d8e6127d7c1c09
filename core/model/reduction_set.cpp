#include "core/model/reduction_set.hpp"

namespace rulestream {

namespace {
constexpr std::uint8_t kHasCounts = 1, kHasZeros = 2, kHasNans = 4, kHasInfs = 8;
}  // namespace

std::optional<ElementCounts> ReductionSet::counts() const {
  if ((counts_present_ & kHasCounts) == 0) return std::nullopt;
  const auto part = [&](std::uint8_t flag, std::size_t i) {
    return (counts_present_ & flag) != 0 ? std::optional(counts_[i]) : std::nullopt;
  };
  return ElementCounts{.elements = counts_[0],
                       .zeros = part(kHasZeros, 1),
                       .nans = part(kHasNans, 2),
                       .infs = part(kHasInfs, 3)};
}

void ReductionSet::set_counts(ElementCounts counts) {
  counts_present_ = kHasCounts;
  counts_ = {counts.elements, counts.zeros.value_or(0), counts.nans.value_or(0),
             counts.infs.value_or(0)};
  if (counts.zeros) counts_present_ |= kHasZeros;
  if (counts.nans) counts_present_ |= kHasNans;
  if (counts.infs) counts_present_ |= kHasInfs;
}

}  // namespace rulestream
