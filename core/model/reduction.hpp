#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/model/dtype.hpp"

namespace rulestream {

// The reductions smdebug knows. Each can be taken of the values or of their absolute values.
enum class Reduction : std::uint8_t { Min, Max, Mean, Prod, Std, Variance, Sum, L1, L2 };

inline constexpr int kReductionCount = 9;
inline constexpr Reduction kAllReductions[kReductionCount] = {
    Reduction::Min,      Reduction::Max, Reduction::Mean, Reduction::Prod, Reduction::Std,
    Reduction::Variance, Reduction::Sum, Reduction::L1,   Reduction::L2};

struct ReductionKey {
  Reduction reduction;
  bool abs = false;

  friend auto operator<=>(const ReductionKey&, const ReductionKey&) = default;
  // 0..17, for dense tables: reductions in kAllReductions order, plain before abs.
  int index() const { return static_cast<int>(reduction) + (abs ? kReductionCount : 0); }
  static ReductionKey from_index(int index) {
    return {static_cast<Reduction>(index % kReductionCount), index >= kReductionCount};
  }
};
inline constexpr int kReductionKeyCount = 2 * kReductionCount;

// "min", "max", "mean", "prod", "std", "variance", "sum", "l1", "l2".
std::string_view reduction_name(Reduction reduction);

// "mean" or "abs_mean": the spelling of saved reduction tensor names and of inspect's JSON.
std::string reduction_key_name(ReductionKey key);

// Parses "mean", "l1", also the collection config spellings "l1_norm" / "l2_norm".
std::optional<Reduction> reduction_from_name(std::string_view name);

// Parses "abs_mean", "abs_l2_norm", "min", ...
std::optional<ReductionKey> reduction_key_from_name(std::string_view name);

// One number with the dtype it would have in numpy (float32 for a float32 tensor's mean,
// float64 for an int tensor's mean, int64 for an int tensor's sum, bool for a bool min).
class Scalar {
 public:
  Scalar() = default;
  static Scalar of_double(DType dtype, double value);  // any floating dtype
  static Scalar of_int(DType dtype, std::int64_t value);
  static Scalar of_uint(DType dtype, std::uint64_t value);
  static Scalar of_bool(bool value);

  DType dtype() const { return dtype_; }
  double as_double() const;
  std::int64_t as_int() const;    // exact for signed integer dtypes
  std::uint64_t as_uint() const;  // exact for unsigned integer dtypes

  // The 8 bytes behind the number (a double, int64 or uint64 by dtype), and back: for compact
  // storage of many scalars (ReductionSet). from_bits takes only what bits() gave.
  std::uint64_t bits() const { return bits_; }
  static Scalar from_bits(DType dtype, std::uint64_t bits);

  // Numbers compare as numbers (NaN equals nothing), with their dtypes.
  friend bool operator==(const Scalar& a, const Scalar& b);

 private:
  DType dtype_ = DType::Invalid;
  std::uint64_t bits_ = 0;  // a double for floating dtypes, an int64 or uint64 otherwise
};

}  // namespace rulestream
