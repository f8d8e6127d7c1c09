#include "tests/support/reduction_checks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "tests/support/smdebug_expected.hpp"
#include "tests/support/value_fingerprint.hpp"

namespace rulestream::testing {
namespace {

namespace json = boost::json;

bool same_double(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

bool integral_dtype(DType dtype) {
  return is_integer(dtype) || dtype == DType::Bool;
}

Int128 scalar_integer(const Scalar& scalar) {
  if (is_signed_integer(scalar.dtype())) return scalar.as_int();
  return scalar.as_uint();
}

std::string printed_scalar(const Scalar& scalar) {
  std::string text = std::string(dtype_name(scalar.dtype())) + " ";
  if (is_signed_integer(scalar.dtype())) return text + printed(scalar.as_int());
  if (is_unsigned_integer(scalar.dtype())) return text + printed(scalar.as_uint());
  if (scalar.dtype() == DType::Bool) return text + printed(scalar.as_uint() != 0);
  return text + printed(scalar.as_double());
}

double relative_tolerance(DType dtype) {
  switch (dtype) {
    case DType::Float16:
      return 1e-3;
    case DType::BFloat16:
      return 1e-2;
    case DType::Float32:
      return 1e-5;
    default:
      return 1e-12;
  }
}

double unit_roundoff(DType dtype) {
  switch (dtype) {
    case DType::Float16:
      return std::ldexp(1.0, -11);
    case DType::BFloat16:
      return std::ldexp(1.0, -8);
    case DType::Float32:
      return std::ldexp(1.0, -24);
    default:
      return std::ldexp(1.0, -53);
  }
}

double smallest_normal(DType dtype) {
  switch (dtype) {
    case DType::Float16:
      return std::ldexp(1.0, -14);
    case DType::BFloat16:
    case DType::Float32:
      return std::numeric_limits<float>::min();
    default:
      return std::numeric_limits<double>::min();
  }
}

// Within tolerance, with NaN matching NaN and infinities matching in sign only.
bool close_enough(double ours, double wanted, double tolerance) {
  if (!std::isfinite(ours) || !std::isfinite(wanted)) return same_double(ours, wanted);
  if (tolerance == 0) return ours == wanted;
  return std::fabs(ours - wanted) <= tolerance;
}

void expect_dtype(const Scalar& ours, DType wanted, const Where& where, const std::string& key,
                  std::string_view why, MismatchLog& log) {
  if (ours.dtype() != wanted) {
    log.fail(where, key + ".dtype",
             "rulestream gives " + std::string(dtype_name(ours.dtype())) + ", " + std::string(why) +
                 " " + std::string(dtype_name(wanted)));
  }
}

// Against the test's own figure, where rulestream deliberately differs from smdebug.
void check_against_reference(const ReductionCase& c, const ReferenceReduction& reference,
                             std::string_view reason, const Where& where, const std::string& key,
                             MismatchLog& log) {
  if (!c.ours.ok()) {
    log.fail(where, key,
             "rulestream raised " + c.ours.describe_error() + "; expected a value (" +
                 std::string(reason) + ")");
    return;
  }
  const Scalar& ours = *c.ours.value;
  expect_dtype(ours, reference.dtype, where, key, "the reference dtype is", log);
  if (integral_dtype(reference.dtype) && reference.exact) {
    if (scalar_integer(ours) != *reference.exact || !integral_dtype(ours.dtype())) {
      log.fail(where, key,
               "rulestream gives " + printed_scalar(ours) + ", the exact result is " +
                   printed(static_cast<double>(*reference.exact)) + " (" + std::string(reason) +
                   ")");
    }
    return;
  }
  const double wanted = round_to_dtype(reference.value, reference.dtype);
  const double tolerance =
      reduction_tolerance(reference.dtype, c.key, magnitudes_of(*c.elements), wanted);
  if (!close_enough(ours.as_double(), wanted, tolerance)) {
    log.fail(where, key,
             "rulestream gives " + printed_scalar(ours) + ", the test computes " + printed(wanted) +
                 " (tolerance " + printed(tolerance) + "; " + std::string(reason) + ")");
  }
}

// smdebug wrapped the integer around; its figure must be the exact result modulo 2^64.
void check_wrapped(const ReductionCase& c, const ReferenceReduction& reference, const Where& where,
                   const std::string& key, MismatchLog& log) {
  if (json_error(c.expected)) return;
  const auto wanted = json_integer(member(c.expected.get_object(), "v", key));
  const Int128 wrapped = is_unsigned_integer(c.elements->dtype)
                             ? Int128{reference.wrapped}
                             : Int128{static_cast<std::int64_t>(reference.wrapped)};
  if (!wanted || *wanted != wrapped) {
    log.fail(where, key + " (smdebug)",
             "smdebug reported " + json_text(c.expected) +
                 ", which is not the exact result modulo 2^64; the test's reading of the "
                 "difference is wrong");
  }
}

void check_error(const ReductionCase& c, const std::string& wanted, const Where& where,
                 const std::string& key, MismatchLog& log) {
  if (c.ours.ok()) {
    log.fail(where, key,
             "rulestream gives " + printed_scalar(*c.ours.value) + ", smdebug raised " + wanted);
  } else if (c.ours.error != wanted) {
    log.fail(where, key,
             "rulestream raised " + c.ours.describe_error() + ", smdebug raised " + wanted);
  }
}

// Against smdebug's figure: exactly when the reduction was saved, else within tolerance
// (times `looseness` where numpy's own figure is known to be less precise).
void check_against_expected(const ReductionCase& c, const Where& where, const std::string& key,
                            MismatchLog& log, double looseness = 1.0) {
  const json::object& expected = c.expected.get_object();
  if (!c.ours.ok()) {
    log.fail(where, key,
             "rulestream raised " + c.ours.describe_error() + ", smdebug reported " +
                 json_text(c.expected));
    return;
  }
  const Scalar& ours = *c.ours.value;
  const std::string dtype = json_string(member(expected, "dtype", key), key + ".dtype");
  log.expect_equal(where, key + ".dtype", std::string(dtype_name(ours.dtype())), dtype);
  const json::value& v = member(expected, "v", key);
  if (integral_dtype(ours.dtype())) {
    const auto wanted = json_integer(v);
    if (!wanted || *wanted != scalar_integer(ours)) {
      log.fail(where, key,
               "rulestream gives " + printed_scalar(ours) + ", smdebug reported " + json_text(v));
    }
    return;
  }
  const double wanted = json_double(v, key);
  if (c.saved) {
    if (!same_double(ours.as_double(), wanted)) {
      log.fail(
          where, key + " (saved)",
          "rulestream gives " + printed_scalar(ours) + ", the saved value is " + printed(wanted));
    }
    return;
  }
  const auto dtype_of_result = dtype_from_name(dtype).value_or(ours.dtype());
  const double tolerance =
      looseness * reduction_tolerance(dtype_of_result, c.key, magnitudes_of(*c.elements), wanted);
  if (!close_enough(ours.as_double(), wanted, tolerance)) {
    log.fail(where, key,
             "rulestream gives " + printed_scalar(ours) + ", smdebug reported " + printed(wanted) +
                 " (difference " + printed(std::fabs(ours.as_double() - wanted)) + ", tolerance " +
                 printed(tolerance) + ")");
  }
}

}  // namespace

void check_saved_against_value(ReductionKey key, const json::value& saved,
                               const DecodedElements& elements, const Where& where,
                               MismatchLog& log) {
  const std::string name = "saved " + reduction_key_name(key) + " vs value";
  if (json_error(saved) || !saved.is_object() || elements.values.empty()) return;
  const double wanted = json_double(member(saved.get_object(), "v", name), name);
  ReferenceReduction reference = reference_reduction(elements, key);
  // torch's std and variance are unbiased (ddof = 1).
  const auto n = static_cast<long double>(elements.values.size());
  if (n > 1 && key.reduction == Reduction::Variance) reference.value *= n / (n - 1);
  if (n > 1 && key.reduction == Reduction::Std) reference.value *= std::sqrt(n / (n - 1));
  const double ours = round_to_dtype(reference.value, elements.dtype);
  const double tolerance =
      reduction_tolerance(elements.dtype, key, magnitudes_of(elements), wanted);
  if (!close_enough(ours, wanted, tolerance)) {
    log.fail(where, name,
             "the value rulestream read gives " + printed(ours) + ", the job saved " +
                 printed(wanted) + " (tolerance " + printed(tolerance) + ")");
  }
}

// Tolerances, for reductions computed on read (saved ones are compared bit for bit).
//
// smdebug computes with numpy in the tensor's dtype (pairwise float32 sums, float32
// intermediates for std/variance, a sequential float32 product); rulestream accumulates in
// double and rounds once. The two differ by numpy's rounding errors, which scale with the
// magnitudes numpy handled rather than with the result:
// - relative precision: 1e-5 for float32 (about 80 float32 ulps: pairwise summation of n
//   elements errs by at most ~log2(n) ulps of sum|x|), 1e-3 for float16 (one float16 ulp is
//   2^-10 ~ 9.8e-4 relative; numpy accumulates float16 sums in float32, so one rounding at the
//   end remains), 1e-2 for bfloat16, 1e-12 for float64 (and the float64 results of integer
//   tensors: pairwise float64 sums err by ~log2(n) * 1.1e-16);
// - sum and mean cancel: a sum near zero of large elements keeps the absolute error of the
//   large partial sums, so the tolerance is relative to max(|result|, sum|x|) for sums and to
//   max(|result|, mean|x|) for means;
// - variance is a mean of squared deviations: no cancellation in the sum, but the rounding
//   error of numpy's mean m (up to rel * mean|x|) shifts every deviation, adding up to
//   (rel * mean|x|)^2 to the variance, and rel * mean|x| to the std: those are the floors;
// - prod is sequential in numpy: n roundings of u (the unit roundoff) each, so the relative
//   tolerance is max(rel, n * u); below the smallest normal number numpy's partial products
//   lose precision to subnormal rounding, so results that small only need to agree in
//   magnitude (absolute floor: the smallest normal);
// - l1 and l2 are sums of non-negative terms: relative to the result;
// - min and max select an element: exact; integer results: exact.
double reduction_tolerance(DType result_dtype, ReductionKey key, const Magnitudes& data,
                           double expected) {
  if (!is_floating(result_dtype)) return 0;
  const double rel = relative_tolerance(result_dtype);
  const double magnitude = std::fabs(expected);
  const double mean_abs = static_cast<double>(data.mean_abs);
  switch (key.reduction) {
    case Reduction::Min:
    case Reduction::Max:
      return 0;
    case Reduction::Mean:
      return rel * std::max(magnitude, mean_abs);
    case Reduction::Sum:
      return rel * std::max(magnitude, static_cast<double>(data.sum_abs));
    case Reduction::Std:
      return rel * std::max(magnitude, mean_abs);
    case Reduction::Variance:
      return rel * std::max(magnitude, rel * mean_abs * mean_abs);
    case Reduction::Prod:
      return std::max(rel, static_cast<double>(data.count) * unit_roundoff(result_dtype)) *
                 magnitude +
             smallest_normal(result_dtype);
    case Reduction::L1:
    case Reduction::L2:
      return rel * magnitude;
  }
  return 0;
}

void check_reduction(const ReductionCase& c, const Where& where, MismatchLog& log) {
  const std::string key = "reductions." + reduction_key_name(c.key);
  const std::optional<std::string> expected_error = json_error(c.expected);
  if (!expected_error && !c.expected.is_object()) {
    log.fail(where, key,
             "the expected file holds neither a value nor an error: " + json_text(c.expected));
    return;
  }

  if (c.value != nullptr && c.value->is_string() && !c.saved) {
    static const std::set<std::string> kNumpyTypeErrors = {"UFuncTypeError", "ValueError",
                                                           "TypeError"};
    if (!expected_error || !kNumpyTypeErrors.contains(*expected_error)) {
      log.fail(where, key + " (smdebug)",
               "smdebug reported " + json_text(c.expected) +
                   " for a string tensor; the suite expects numpy to raise");
    }
    if (c.ours.ok() || c.ours.error != "ReductionUnsupported") {
      log.fail(where, key,
               "rulestream gives " +
                   (c.ours.ok() ? printed_scalar(*c.ours.value) : c.ours.describe_error()) +
                   " for a string tensor, expected ReductionUnsupported");
    }
    return;
  }

  if (c.saved || c.elements == nullptr) {
    // Read from the file, or unavailable (reduction-only tensor without this reduction).
    if (expected_error) {
      check_error(c, *expected_error, where, key, log);
    } else if (c.elements == nullptr && !c.saved) {
      log.fail(where, key,
               "smdebug gives " + json_text(c.expected) +
                   ", which is neither listed as saved nor computable: rulestream has no value "
                   "at this step");
    } else {
      check_against_expected(c, where, key, log);
    }
    return;
  }

  const ReferenceReduction reference = reference_reduction(*c.elements, c.key);
  const DType source = c.elements->dtype;
  const bool is_norm = c.key.reduction == Reduction::L1 || c.key.reduction == Reduction::L2;
  const double expected_v =
      expected_error ? 0.0 : json_double(member(c.expected.get_object(), "v", key), key);

  if (c.smdebug_lost_value && expected_error == "TensorUnavailableForStep") {
    check_against_reference(c, reference, "smdebug lost the saved value to its shape entry", where,
                            key, log);
  } else if (source == DType::Int8) {
    check_against_reference(c, reference, "int8, which smdebug reads as uint8", where, key, log);
  } else if (is_norm && c.value->shape().size() != 1) {
    check_against_reference(c, reference,
                            "element-wise norm of a " + std::to_string(c.value->shape().size()) +
                                "-D tensor; smdebug: " + json_text(c.expected),
                            where, key, log);
  } else if (reference.overflows) {
    check_against_reference(c, reference, "integer result beyond the dtype", where, key, log);
    check_wrapped(c, reference, where, key, log);
  } else if (source == DType::Float16 &&
             (c.key.reduction == Reduction::Std || c.key.reduction == Reduction::Variance)) {
    check_against_reference(c, reference, "float16 std/variance, computed accurately", where, key,
                            log);
    // Where numpy did not overflow, its float16 figure must agree too, within its own
    // precision: numpy rounds every deviation and every square to float16 (2^-11 relative
    // each) before summing, then rounds the sum and the quotient, so its variance errs by up
    // to ~6 * 2^-11 ~ 2.9e-3 relative (std by half that plus one rounding): three float16
    // ulps, three times the float16 tolerance.
    if (!expected_error && std::isfinite(expected_v)) {
      check_against_expected(c, where, key, log, 3.0);
    }
  } else if (is_floating(source) && !expected_error && std::isinf(expected_v) &&
             std::isfinite(round_to_dtype(reference.value, reference.dtype))) {
    check_against_reference(
        c, reference,
        "numpy overflowed an intermediate in " + std::string(dtype_name(source)) + " to Infinity",
        where, key, log);
  } else if (expected_error) {
    check_error(c, *expected_error, where, key, log);
  } else {
    check_against_expected(c, where, key, log);
  }
}

}  // namespace rulestream::testing
