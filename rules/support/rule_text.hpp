#pragma once

#include <cstddef>
#include <string>

#include "rules/rule.hpp"

namespace rulestream {

// A finding names at most this many tensors: a job with ten thousand exploding tensors needs a
// readable event, not a ten-thousand-entry one. Rules stop scanning once they have this many.
inline constexpr std::size_t kMaxReportedTensors = 10;

// A figure as rule messages print it: six significant digits ("3.2e-10", "1e-07", "0.1"), and
// "NaN", "Infinity", "-Infinity" as rule events spell the non-finite values.
std::string format_figure(double value);
// A figure for a person's sentence, to three significant digits ("6.34", "1.2e+10", "190"):
// what a verdict says ("up 6.34% from its best"), where the six of format_figure are noise.
std::string format_rounded(double value);

// " (and 3 more tensors)" after a message about the first of `finding.tensors`; "and at least"
// when the rule stopped at kMaxReportedTensors. Empty for a single tensor.
std::string more_tensors_suffix(const Finding& finding);

}  // namespace rulestream
