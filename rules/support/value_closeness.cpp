#include "rules/support/value_closeness.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace rulestream {
namespace {

// Element i of a value whose dtype is T, read straight from its (possibly unaligned) bytes: the
// common float32 and float64 cases skip TensorValue::as_double's per-element dtype switch.
template <typename T>
auto loader(const TensorValue& value) {
  return [data = value.bytes().data()](std::int64_t i) {
    T element;
    std::memcpy(&element, data + static_cast<std::size_t>(i) * sizeof(T), sizeof(T));
    return static_cast<double>(element);
  };
}

// Elements [begin, end).
template <typename LoadA, typename LoadB>
void compare_elements(std::int64_t begin, std::int64_t end, const LoadA& load_a,
                      const LoadB& load_b, const Tolerance& tolerance, Closeness& result) {
  for (std::int64_t i = begin; i < end; ++i) {
    const double x = load_a(i);
    const double y = load_b(i);
    bool close = false;
    if (std::isnan(x) || std::isnan(y)) {
      close = tolerance.equal_nan && std::isnan(x) && std::isnan(y);
    } else if (std::isinf(x) || std::isinf(y)) {
      close = x == y;
    } else {
      const double difference = std::fabs(x - y);
      result.max_abs_difference = std::max(result.max_abs_difference, difference);
      close = difference <= tolerance.atol + tolerance.rtol * std::fabs(y);
    }
    if (!close) ++result.differing;
  }
}

}  // namespace

CloseScreen close_screen(const ReductionSet& set) {
  CloseScreen screen;
  if (const auto counts = set.counts()) {
    screen.elements = counts->elements;
    screen.non_finite = counts->nans.value_or(0) + counts->infs.value_or(0) > 0;
  }
  screen.dtype = set.source_dtype();
  if (const auto sum = set.get({Reduction::Sum, false})) screen.sum = sum->as_double();
  if (const auto l1 = set.get({Reduction::L1, false})) screen.l1 = l1->as_double();
  return screen;
}

bool may_be_close(const CloseScreen& a, const CloseScreen& b, const Tolerance& tolerance) {
  if (!a.elements || !b.elements) return true;
  if (*a.elements != *b.elements) return false;  // shapes cannot match
  if (a.non_finite || b.non_finite) return true;
  // The figures kCloseScreenReductions names: a rule asks for no more than these.
  if (!a.sum || !b.sum || !a.l1 || !b.l1) return true;
  // Element-wise |a_i - b_i| <= atol + rtol * |b_i| adds up to the bound on the sums. Each sum and
  // l1 was carried in double and rounded once to its dtype: allow twice the coarser dtype's
  // rounding of the magnitudes involved, and more than double accumulation can lose.
  const auto epsilon = [](DType dtype) {
    switch (dtype) {
      case DType::Float16:
        return 0x1p-11;
      case DType::BFloat16:
        return 0x1p-8;
      case DType::Float32:
        return 0x1p-24;
      default:
        return 0x1p-52;
    }
  };
  const double magnitude = *a.l1 + *b.l1;
  const double relative = 2.0 * std::max(epsilon(a.dtype), epsilon(b.dtype)) + 1e-8;
  const double rounding = relative * magnitude;
  const double bound = static_cast<double>(*b.elements) * tolerance.atol +
                       tolerance.rtol * *b.l1 * (1.0 + relative) + rounding;
  // The same bound holds for the l1 norms, since ||a_i| - |b_i|| <= |a_i - b_i|: it tells apart
  // values that moved together in proportion, whose sums can stay within it while their
  // magnitudes do not (weights scaled a little at every step, as weight decay does).
  return std::fabs(*a.sum - *b.sum) <= bound && std::fabs(*a.l1 - *b.l1) <= bound;
}

namespace {

// Elements of a block are compared before the verdict is looked at: small enough that a value
// that is not close is left early, large enough that the check costs nothing.
constexpr std::int64_t kBlock = 256;

// compare_values's pass, in blocks of kBlock elements; `stop_early`: after the first block that
// holds an element outside the tolerance.
Closeness compare(const TensorValue& a, const TensorValue& b, const Tolerance& tolerance,
                  bool stop_early) {
  for (const TensorValue* value : {&a, &b}) {
    if (value->is_string() || !is_real_numeric(value->dtype())) {
      throw std::invalid_argument("compare_values: " + std::string(dtype_name(value->dtype())) +
                                  " values are not real numbers");
    }
  }
  Closeness result;
  if (a.shape() != b.shape()) {
    result.same_shape = false;
    return result;
  }
  const auto count = a.size();
  // Identical bytes are close with no difference at all (a deterministic rerun, a tensor that
  // did not change): one memcmp instead of an element-wise pass. Without equal_nan a NaN is not
  // close even to itself, so that case still goes element by element.
  if (tolerance.equal_nan && a.dtype() == b.dtype() && a.bytes().size() == b.bytes().size() &&
      std::memcmp(a.bytes().data(), b.bytes().data(), a.bytes().size()) == 0) {
    return result;
  }
  const auto in_blocks = [&](const auto& load_a, const auto& load_b) {
    for (std::int64_t begin = 0; begin < count; begin += kBlock) {
      compare_elements(begin, std::min(count, begin + kBlock), load_a, load_b, tolerance, result);
      if (stop_early && result.differing > 0) return;
    }
  };
  if (a.dtype() == DType::Float32 && b.dtype() == DType::Float32) {
    in_blocks(loader<float>(a), loader<float>(b));
  } else if (a.dtype() == DType::Float64 && b.dtype() == DType::Float64) {
    in_blocks(loader<double>(a), loader<double>(b));
  } else {
    const auto as_double = [](const TensorValue& value) {
      return [&value](std::int64_t i) { return value.as_double(i); };
    };
    in_blocks(as_double(a), as_double(b));
  }
  return result;
}

}  // namespace

Closeness compare_values(const TensorValue& a, const TensorValue& b, const Tolerance& tolerance) {
  return compare(a, b, tolerance, /*stop_early=*/false);
}

std::optional<double> close_within(const TensorValue& a, const TensorValue& b,
                                   const Tolerance& tolerance) {
  const Closeness closeness = compare(a, b, tolerance, /*stop_early=*/true);
  if (!closeness.close()) return std::nullopt;
  return closeness.max_abs_difference;
}

}  // namespace rulestream
