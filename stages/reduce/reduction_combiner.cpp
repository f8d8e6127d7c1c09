#include "stages/reduce/reduction_combiner.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/model/half.hpp"
#include "stages/reduce/integer_result.hpp"

namespace rulestream {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// An integer scalar widened exactly. Integer tensors' figures are integers even when they came
// back as float64 (|-128| of int8, a sum beyond int64), so the cast loses nothing in range.
Int128 wide(const Scalar& scalar) {
  if (is_signed_integer(scalar.dtype())) return scalar.as_int();
  if (!is_floating(scalar.dtype())) return scalar.as_uint();  // unsigned and bool
  const double value = std::clamp(scalar.as_double(), -0x1p126, 0x1p126);
  return static_cast<Int128>(value);
}

bool all_integer(const std::vector<Scalar>& values) {
  return std::none_of(values.begin(), values.end(),
                      [](const Scalar& value) { return is_floating(value.dtype()); });
}

bool any_nan(const std::vector<double>& values) {
  return std::any_of(values.begin(), values.end(), [](double value) { return std::isnan(value); });
}

std::vector<double> doubles_of(const std::vector<Scalar>& values) {
  std::vector<double> result;
  result.reserve(values.size());
  for (const Scalar& value : values) result.push_back(value.as_double());
  return result;
}

// A part's statistics for mean/variance: its count and figures in double.
struct Moments {
  double count = 0;
  double mean = 0;
  double variance = 0;
  double std_dev = 0;  // kept apart: finite where a huge tensor's variance overflowed
};

class Combiner {
 public:
  Combiner(const std::vector<WorkerReductions>& parts, DType dtype)
      : parts_(parts), dtype_(dtype), floating_(is_floating(dtype)) {}

  ReductionSet combine() const {
    ReductionSet result;
    for (const bool abs : {false, true}) {
      put(result, {Reduction::Min, abs}, extreme({Reduction::Min, abs}, false));
      put(result, {Reduction::Max, abs}, extreme({Reduction::Max, abs}, true));
      put(result, {Reduction::Sum, abs}, sum({Reduction::Sum, abs}));
      put(result, {Reduction::Prod, abs}, product({Reduction::Prod, abs}));
      put(result, {Reduction::L1, abs}, l1({Reduction::L1, abs}));
      put(result, {Reduction::L2, abs}, l2({Reduction::L2, abs}));
      combine_moments(result, abs, result.get({Reduction::Sum, abs}));
    }
    return result;
  }

 private:
  static void put(ReductionSet& set, ReductionKey key, const std::optional<Scalar>& value) {
    if (value) set.set(key, *value);
  }

  static bool is_empty(const WorkerReductions& part) { return part.count && *part.count == 0; }

  // The key's scalar from every part (or every non-empty one); nullopt when one lacks it.
  std::optional<std::vector<Scalar>> gather(ReductionKey key, bool skip_empty) const {
    std::vector<Scalar> values;
    for (const WorkerReductions& part : parts_) {
      if (skip_empty && is_empty(part)) continue;
      const auto& value = part.reductions.get(key);
      if (!value) return std::nullopt;
      values.push_back(*value);
    }
    return values;
  }

  // What compute_reductions gives for mean/std/variance/l1/l2: the tensor's floating dtype,
  // float64 for integers and bool.
  Scalar real(double value) const {
    if (!floating_) return Scalar::of_double(DType::Float64, value);
    return Scalar::of_double(dtype_, value);
  }

  // Empty parts hold no extreme; with only empty parts there is none, as for an empty tensor.
  std::optional<Scalar> extreme(ReductionKey key, bool want_max) const {
    const auto values = gather(key, true);
    if (!values || values->empty()) return std::nullopt;
    if (floating_) {
      const std::vector<double> numbers = doubles_of(*values);
      if (any_nan(numbers)) return real(kNaN);
      return real(want_max ? *std::max_element(numbers.begin(), numbers.end())
                           : *std::min_element(numbers.begin(), numbers.end()));
    }
    // Keep the extreme part's own scalar: int8 stays int8, float64 |-128| stays float64.
    const auto less = [](const Scalar& a, const Scalar& b) { return wide(a) < wide(b); };
    return want_max ? *std::max_element(values->begin(), values->end(), less)
                    : *std::min_element(values->begin(), values->end(), less);
  }

  std::optional<Scalar> sum(ReductionKey key) const {
    const auto values = gather(key, false);
    if (!values) return std::nullopt;
    if (floating_) {
      double total = 0;
      for (const Scalar& value : *values) total += value.as_double();
      return real(total);
    }
    if (all_integer(*values)) {
      Int128 total = 0;
      bool overflow = false;
      for (const Scalar& value : *values)
        overflow |= __builtin_add_overflow(total, wide(value), &total);
      if (!overflow) return integer_result(dtype_, total);
    }
    // A part's sum already left int64 (or the total did): float64, as compute_reductions does.
    double total = 0;
    for (const Scalar& value : *values) total += value.as_double();
    return Scalar::of_double(DType::Float64, total);
  }

  std::optional<Scalar> product(ReductionKey key) const {
    const auto values = gather(key, false);
    if (!values) return std::nullopt;
    double approx = 1;
    for (const Scalar& value : *values) approx *= value.as_double();
    if (floating_) return real(approx);
    // A zero anywhere makes the product exactly 0, even beside a part that left int64.
    if (std::any_of(values->begin(), values->end(),
                    [](const Scalar& value) { return value.as_double() == 0; })) {
      return integer_result(dtype_, 0);
    }
    if (all_integer(*values)) {
      Int128 exact = 1;
      bool overflow = false;
      for (const Scalar& value : *values)
        overflow |= __builtin_mul_overflow(exact, wide(value), &exact);
      if (!overflow) return integer_result(dtype_, exact);
    }
    return Scalar::of_double(DType::Float64, approx);
  }

  std::optional<Scalar> l1(ReductionKey key) const {
    const auto values = gather(key, false);
    if (!values) return std::nullopt;
    double total = 0;
    for (const Scalar& value : *values) total += value.as_double();
    return real(total);
  }

  // sqrt(sum l2_i^2), scaled by the largest part so that squares of large norms do not overflow.
  std::optional<Scalar> l2(ReductionKey key) const {
    const auto values = gather(key, false);
    if (!values) return std::nullopt;
    const std::vector<double> norms = doubles_of(*values);
    if (any_nan(norms)) return real(kNaN);
    double largest = 0;
    for (const double norm : norms) largest = std::max(largest, std::fabs(norm));
    if (largest == 0 || std::isinf(largest)) return real(largest);
    double squares = 0;
    for (const double norm : norms) squares += (norm / largest) * (norm / largest);
    return real(std::sqrt(squares) * largest);
  }

  // Mean, variance and std of the values (or of their absolute values) together: the variance
  // needs the combined mean. `sum` is the combined sum of the same values, if any.
  void combine_moments(ReductionSet& result, bool abs, std::optional<Scalar> sum) const {
    const ReductionKey mean_key{Reduction::Mean, abs};
    const ReductionKey variance_key{Reduction::Variance, abs};
    const ReductionKey std_key{Reduction::Std, abs};

    std::vector<Moments> moments;
    bool have_mean = true;
    bool have_variance = true;
    for (const WorkerReductions& part : parts_) {
      const auto& mean = part.reductions.get(mean_key);
      const auto& variance = part.reductions.get(variance_key);
      const auto& std_dev = part.reductions.get(std_key);
      if (!mean) have_mean = false;
      if (!variance && !std_dev) have_variance = false;
      if (is_empty(part)) continue;  // weight 0: its NaN mean says nothing about the others
      if (!part.count) {
        have_mean = false;
        have_variance = false;
        continue;
      }
      Moments m;
      m.count = static_cast<double>(*part.count);
      if (mean) m.mean = mean->as_double();
      if (variance) m.variance = variance->as_double();
      if (std_dev) m.std_dev = std_dev->as_double();
      if (!variance) m.variance = m.std_dev * m.std_dev;
      if (!std_dev) m.std_dev = std::sqrt(m.variance);
      moments.push_back(m);
    }
    if (!have_mean) return;  // no mean means no variance either

    if (moments.empty()) {  // only empty parts: an empty tensor's NaN figures
      result.set(mean_key, real(kNaN));
      if (have_variance) {
        result.set(variance_key, real(kNaN));
        result.set(std_key, real(kNaN));
      }
      return;
    }

    double total = 0;
    for (const Moments& m : moments) total += m.count;
    // An integer tensor's exact sum gives its mean as compute_reductions does, to the bit;
    // weighted part means would cancel where they straddle zero.
    const bool exact_sum = !floating_ && sum && !is_floating(sum->dtype());
    const double mean = exact_sum ? sum->as_double() / total : combined_mean(moments, total);
    result.set(mean_key, real(mean));
    if (!have_variance) return;
    // Population variance by the parallel formula, divided through by N term by term:
    // sum (n_i / N) * (var_i + (mean_i - mean)^2).
    double variance = 0;
    for (const Moments& m : moments) {
      const double offset = m.mean - mean;
      variance += (m.count / total) * (m.variance + offset * offset);
    }
    result.set(variance_key, real(variance));
    result.set(std_key,
               real(std::isinf(variance) ? scaled_std(moments, total, mean) : std::sqrt(variance)));
  }

  // The std when the variance overflowed double (float64 elements beyond ~1e154): the same sum
  // with every term divided by the largest std or mean offset, as compute_reductions recovers it.
  static double scaled_std(const std::vector<Moments>& moments, double total, double mean) {
    double scale = 0;
    for (const Moments& m : moments) {
      scale = std::max({scale, m.std_dev, std::fabs(m.mean - mean)});
    }
    if (!std::isfinite(scale)) return std::numeric_limits<double>::infinity();
    double sum = 0;
    for (const Moments& m : moments) {
      const double spread = m.std_dev / scale;
      const double offset = (m.mean - mean) / scale;
      sum += (m.count / total) * (spread * spread + offset * offset);
    }
    return std::sqrt(sum) * scale;
  }

  // sum (n_i / N) * mean_i, shifted by the first part's mean: equal means give that mean back
  // exactly, so a constant tensor keeps a variance of exactly 0. Infinite means skip the shift
  // (inf - inf would turn [inf, 1] into NaN where numpy says inf).
  static double combined_mean(const std::vector<Moments>& moments, double total) {
    const bool finite = std::all_of(moments.begin(), moments.end(),
                                    [](const Moments& m) { return std::isfinite(m.mean); });
    const double shift = finite ? moments.front().mean : 0.0;
    double offset = 0;
    for (const Moments& m : moments) offset += (m.count / total) * (m.mean - shift);
    return shift + offset;
  }

  const std::vector<WorkerReductions>& parts_;
  DType dtype_;
  bool floating_;
};

}  // namespace

namespace {

// Element counts add up; the total is known only when every part's is (a part that saved only
// reductions has none).
std::optional<ElementCounts> combined_counts(const std::vector<WorkerReductions>& parts) {
  for (const WorkerReductions& part : parts) {
    if (!part.reductions.counts()) return std::nullopt;
  }
  ElementCounts total = parts.front().reductions.counts().value();
  const auto add = [](std::optional<std::int64_t>& sum, const std::optional<std::int64_t>& part) {
    sum = sum && part ? std::optional(*sum + *part) : std::nullopt;
  };
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const ElementCounts part = parts[i].reductions.counts().value();
    total.elements += part.elements;
    add(total.zeros, part.zeros);
    add(total.nans, part.nans);
    add(total.infs, part.infs);
  }
  return total;
}

}  // namespace

ReductionSet combine_reductions(const std::vector<WorkerReductions>& parts) {
  if (parts.empty()) return {};
  const DType dtype = parts.front().dtype;
  for (const WorkerReductions& part : parts) {
    if (part.dtype != dtype) {
      throw std::invalid_argument("combine_reductions: the parts have different dtypes (" +
                                  std::string(dtype_name(dtype)) + " and " +
                                  std::string(dtype_name(part.dtype)) + ")");
    }
    if (part.count && *part.count < 0) {
      throw std::invalid_argument("combine_reductions: a part has a negative element count (" +
                                  std::to_string(*part.count) + ")");
    }
  }
  ReductionSet combined;
  if (is_real_numeric(dtype)) combined = Combiner(parts, dtype).combine();
  combined.set_source_dtype(dtype);
  if (const auto counts = combined_counts(parts)) combined.set_counts(*counts);
  return combined;
}

}  // namespace rulestream
