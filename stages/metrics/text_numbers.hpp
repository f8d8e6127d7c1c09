#pragma once

// Numbers as the tools that write text metrics print them, read as Python reads them back: a
// CSV cell as float(cell) (decimal or exponent notation, a sign, "nan", "inf", "infinity" in any
// case; no underscores), a JSON number as json.loads does (with Python's NaN, Infinity and
// -Infinity tokens), and a step as a number with an integral value.

#include <cstdint>
#include <optional>
#include <string_view>

namespace rulestream {

// `text` without the whitespace Python's str.strip() removes (ASCII spaces, tabs, CR, LF, VT,
// FF).
std::string_view strip_spaces(std::string_view text);

// Python's float(text) for `text`, surrounding whitespace allowed: decimal or exponent notation
// with an optional sign, or nan/inf/infinity in any case with an optional sign; out of range
// gives +-inf or a (signed) zero, as Python does. nullopt for anything else: empty text, hex,
// digits with underscores (Python takes those; no metrics writer prints them).
std::optional<double> parse_python_float(std::string_view text);

// A step: a finite number with an integral value within int64 ("3", "3.0", "3e2"); nullopt
// otherwise.
std::optional<std::int64_t> integral_step(double value);

}  // namespace rulestream
