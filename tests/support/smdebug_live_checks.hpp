#pragma once

#include <boost/json/object.hpp>

#include "tests/support/mismatch_log.hpp"
#include "trial/api/trial.hpp"

namespace rulestream::testing {

// Checks the `live` block of an expected file: what smdebug reported for a trial whose job
// had not written its end marker (complete and incomplete steps, workers per global step,
// has_passed_step around the end, wait_for_steps with a timeout, value() at the incomplete
// step and beyond the end).
//
// No sample has such a block yet and smdebug-samples/README.md names only some of its keys,
// so the keys below are the suite's reading of that description. A key the suite does not
// know fails the test (naming it) rather than going unchecked.
void check_live_block(const Trial& trial, const boost::json::object& live, const Where& where,
                      MismatchLog& log);

}  // namespace rulestream::testing
