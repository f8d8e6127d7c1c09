#pragma once

#include <utility>
#include <vector>

namespace rulestream {

// numpy.percentile(values, q) with its default linear interpolation, for a low and a high q at
// once (PoorWeightInitialization's 5th and 95th of every gradient: a large layer's are millions
// of values, and the rule looks at every gradient of its first steps).
//
// Each percentile needs two neighbouring order statistics. Rather than select each pair over
// all the values, a sample of them brackets the two tails: one pass copies out the values at or
// below a low threshold and at or above a high one (a few percent of the values each, chosen so
// that each tail holds its pair with a wide margin), and the pairs are selected within those.
// Where the bracket misses (values concentrated on a few numbers, or an unlucky sample), it
// selects over all the values: the result is always exactly numpy's.
//
// `values` must hold no NaN (numpy's percentile of anything with NaN is NaN: callers leave such
// values unjudged) and at least one value; q_low <= q_high, both in [0, 100]. Reorders values.
std::pair<double, double> percentile_pair(std::vector<double>& values, double q_low, double q_high);

}  // namespace rulestream
