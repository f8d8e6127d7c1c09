#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/model/tensor_value.hpp"
#include "tests/support/mismatch_log.hpp"
#include "tests/support/reference_reductions.hpp"

namespace rulestream::testing {

// sha256 of the value's C-order native (little-endian) element bytes, as smdebug-samples'
// `sha256` (hashlib over the C-contiguous numpy buffer). Numeric values only.
std::string value_sha256(const TensorValue& value);

// An integer as the expected file wrote it (JSON int or uint, or a bool as 0/1).
std::optional<Int128> json_integer(const boost::json::value& value);

// Compares rulestream's value with smdebug's fingerprint of it (README: dtype, shape, size,
// first, sum_f64, min, max, nan_count, inf_count, sha256; strings: dtype "<Un", shape, size,
// first). `key` prefixes the fingerprint's keys in failure messages.
//
// int8 values are read as int8 on purpose (FORMAT.md, "Where rulestream deliberately
// differs"): smdebug reports the same bytes reinterpreted as uint8, so the fingerprint is
// checked against our bytes seen as uint8 (the same sha256, the same figures), and our int8
// elements against `first` reinterpreted as int8.
void check_value_fingerprint(const TensorValue& ours, const boost::json::object& expected,
                             const Where& where, std::string_view key, MismatchLog& log);

}  // namespace rulestream::testing
