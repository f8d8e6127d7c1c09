#include "tests/support/value_fingerprint.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tests/support/sha256.hpp"
#include "tests/support/smdebug_expected.hpp"

namespace rulestream::testing {
namespace {

namespace json = boost::json;

std::string joined(std::string_view key, std::string_view field) {
  return std::string(key) + "." + std::string(field);
}

// Bitwise-style equality of two doubles: NaN equals NaN, and -0.0 differs from 0.0.
bool same_double(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

std::string printed_int128(Int128 value) {
  if (value == 0) return "0";
  const bool negative = value < 0;
  std::string digits;
  for (Int128 rest = value; rest != 0; rest /= 10) {
    const int digit = static_cast<int>(rest % 10);
    digits.push_back(static_cast<char>('0' + (digit < 0 ? -digit : digit)));
  }
  if (negative) digits.push_back('-');
  std::reverse(digits.begin(), digits.end());
  return digits;
}

// One element of `elements` against an expected JSON scalar.
void check_element(const DecodedElements& elements, std::size_t index, const json::value& expected,
                   const Where& where, const std::string& key, MismatchLog& log) {
  if (elements.integral()) {
    const auto wanted = json_integer(expected);
    if (!wanted || *wanted != elements.integers[index]) {
      log.fail(where, key,
               "rulestream gives " + printed_int128(elements.integers[index]) +
                   ", smdebug reported " + json_text(expected));
    }
    return;
  }
  const double ours = static_cast<double>(elements.values[index]);
  const double wanted = json_double(expected, key);
  if (!same_double(ours, wanted)) {
    log.fail(where, key,
             "rulestream gives " + printed(ours) + ", smdebug reported " + printed(wanted));
  }
}

// min/max: an element of the native dtype, so exact (NaN when any element is NaN).
void check_extreme(const DecodedElements& elements, Reduction which, const json::value& expected,
                   const Where& where, const std::string& key, MismatchLog& log) {
  if (elements.values.empty()) return;
  const ReferenceReduction ours = reference_reduction(elements, {which, false});
  if (ours.exact) {
    const auto wanted = json_integer(expected);
    if (!wanted || *wanted != *ours.exact) {
      log.fail(where, key,
               "rulestream's elements give " + printed_int128(*ours.exact) + ", smdebug reported " +
                   json_text(expected));
    }
    return;
  }
  const double value = static_cast<double>(ours.value);
  if (!same_double(value, json_double(expected, key)) &&
      !(value == 0 && json_double(expected, key) == 0)) {  // min of {0, -0}: either zero
    log.fail(where, key,
             "rulestream's elements give " + printed(value) + ", smdebug reported " +
                 json_text(expected));
  }
}

// The figures of a numeric value. `elements` are the ones smdebug's figures describe (for
// int8, our bytes seen as uint8).
void check_numeric(const DecodedElements& elements, const TensorValue& value,
                   const json::object& expected, const Where& where, std::string_view key,
                   MismatchLog& log) {
  const std::size_t count = elements.values.size();
  if (const json::value* first = expected.if_contains("first")) {
    const json::array& wanted = as_array(*first, joined(key, "first"));
    log.expect_equal(where, joined(key, "first.length"), wanted.size(),
                     std::min<std::size_t>(count, 4));
    for (std::size_t i = 0; i < std::min(wanted.size(), count); ++i) {
      check_element(elements, i, wanted[i], where, joined(key, "first[" + std::to_string(i) + "]"),
                    log);
    }
  }
  if (const json::value* sum = expected.if_contains("sum_f64")) {
    // numpy's pairwise float64 sum against ours in long double: both are within a few
    // float64 ulps of sum|x|.
    long double exact = 0;
    long double sum_abs = 0;
    for (const long double v : elements.values) {
      exact += static_cast<double>(v);  // numpy casts each element to float64 first
      sum_abs += std::fabs(static_cast<double>(v));
    }
    const double wanted = json_double(*sum, joined(key, "sum_f64"));
    const double ours = static_cast<double>(exact);
    const bool ok =
        std::isfinite(wanted)
            ? std::fabs(ours - wanted) <=
                  1e-12 * std::max<double>(std::fabs(wanted), static_cast<double>(sum_abs))
            : same_double(ours, wanted);
    if (!ok) {
      log.fail(where, joined(key, "sum_f64"),
               "rulestream's elements sum to " + printed(ours) + ", smdebug reported " +
                   printed(wanted));
    }
  }
  if (const json::value* min = expected.if_contains("min")) {
    check_extreme(elements, Reduction::Min, *min, where, joined(key, "min"), log);
  }
  if (const json::value* max = expected.if_contains("max")) {
    check_extreme(elements, Reduction::Max, *max, where, joined(key, "max"), log);
  }
  if (const json::value* nan_count = expected.if_contains("nan_count")) {
    const auto nans = std::count_if(elements.values.begin(), elements.values.end(),
                                    [](long double v) { return std::isnan(v); });
    log.expect_equal(where, joined(key, "nan_count"), static_cast<std::int64_t>(nans),
                     json_int(*nan_count, joined(key, "nan_count")));
  }
  if (const json::value* inf_count = expected.if_contains("inf_count")) {
    const auto infs = std::count_if(elements.values.begin(), elements.values.end(),
                                    [](long double v) { return std::isinf(v); });
    log.expect_equal(where, joined(key, "inf_count"), static_cast<std::int64_t>(infs),
                     json_int(*inf_count, joined(key, "inf_count")));
  }
  if (const json::value* sha = expected.if_contains("sha256")) {
    log.expect_equal(where, joined(key, "sha256"), value_sha256(value),
                     json_string(*sha, joined(key, "sha256")));
  }
}

std::size_t utf8_code_points(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xc0) != 0x80;
  }));
}

void check_strings(const TensorValue& ours, const json::object& expected, const Where& where,
                   std::string_view key, MismatchLog& log) {
  const std::string dtype = json_string(member(expected, "dtype", key), joined(key, "dtype"));
  if (!ours.is_string()) {
    log.fail(where, joined(key, "dtype"),
             "rulestream gives " + std::string(dtype_name(ours.dtype())) +
                 ", smdebug reported a string array " + dtype);
    return;
  }
  const std::vector<std::string>& strings = ours.strings();
  // numpy's "<Un" is the longest element's length in code points.
  std::size_t longest = 0;
  for (const auto& s : strings) longest = std::max(longest, utf8_code_points(s));
  log.expect_equal(where, joined(key, "dtype"), "<U" + std::to_string(longest), dtype);
  if (const json::value* first = expected.if_contains("first")) {
    const std::vector<std::string> wanted = json_strings(*first, joined(key, "first"));
    const std::vector<std::string> head(
        strings.begin(),
        strings.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(strings.size(), 4)));
    log.expect_equal(where, joined(key, "first"), head, wanted);
  }
}

}  // namespace

std::string value_sha256(const TensorValue& value) {
  return sha256_hex(value.bytes().span());
}

std::optional<Int128> json_integer(const json::value& value) {
  if (value.is_int64()) return value.get_int64();
  if (value.is_uint64()) return value.get_uint64();
  if (value.is_bool()) return value.get_bool() ? 1 : 0;
  return std::nullopt;
}

void check_value_fingerprint(const TensorValue& ours, const json::object& expected,
                             const Where& where, std::string_view key, MismatchLog& log) {
  log.expect_equal(where, joined(key, "shape"), ours.shape(),
                   json_ints(member(expected, "shape", key), joined(key, "shape")));
  log.expect_equal(where, joined(key, "size"), ours.size(),
                   json_int(member(expected, "size", key), joined(key, "size")));

  const std::string dtype = json_string(member(expected, "dtype", key), joined(key, "dtype"));
  if (dtype.starts_with("<U")) {
    check_strings(ours, expected, where, key, log);
    return;
  }
  if (ours.is_string() || !is_real_numeric(ours.dtype())) {
    log.fail(where, joined(key, "dtype"),
             "rulestream gives " + std::string(dtype_name(ours.dtype())) + ", smdebug reported " +
                 dtype);
    return;
  }

  if (dtype == "uint8" && ours.dtype() == DType::Int8) {
    // The deliberate int8 difference: smdebug's figures are of the same bytes as uint8.
    const TensorValue as_uint8(DType::UInt8, ours.shape(), ours.bytes());
    check_numeric(decode_elements(as_uint8), as_uint8, expected, where, key, log);
    if (const json::value* first = expected.if_contains("first")) {
      const json::array& wanted = as_array(*first, joined(key, "first"));
      const DecodedElements signed_elements = decode_elements(ours);
      for (std::size_t i = 0; i < std::min(wanted.size(), signed_elements.integers.size()); ++i) {
        const auto byte = json_integer(wanted[i]);
        const auto reinterpreted =
            byte ? std::optional<Int128>(static_cast<std::int8_t>(static_cast<std::uint8_t>(*byte)))
                 : std::nullopt;
        if (!reinterpreted || *reinterpreted != signed_elements.integers[i]) {
          log.fail(where, joined(key, "first[" + std::to_string(i) + "] as int8"),
                   "rulestream gives " + printed_int128(signed_elements.integers[i]) +
                       ", smdebug's uint8 " + json_text(wanted[i]) + " is int8 " +
                       (reinterpreted ? printed_int128(*reinterpreted) : "?"));
        }
      }
    }
    return;
  }

  log.expect_equal(where, joined(key, "dtype"), std::string(dtype_name(ours.dtype())), dtype);
  check_numeric(decode_elements(ours), ours, expected, where, key, log);
}

}  // namespace rulestream::testing
