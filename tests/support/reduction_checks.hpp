#pragma once

#include <boost/json/value.hpp>

#include "core/model/reduction.hpp"
#include "core/model/tensor_value.hpp"
#include "tests/support/mismatch_log.hpp"
#include "tests/support/reference_reductions.hpp"
#include "tests/support/smdebug_errors.hpp"

namespace rulestream::testing {

// One reduction of one tensor at one step and worker: what smdebug reported and what
// rulestream's Tensor::reduction_value gave.
struct ReductionCase {
  ReductionKey key;
  const boost::json::value& expected;  // {"dtype", "v", ...} or {"error": ...}
  const Outcome<Scalar>& ours;
  bool saved = false;                         // smdebug's saved_reductions lists the key
  const TensorValue* value = nullptr;         // our value, when one was saved
  const DecodedElements* elements = nullptr;  // its elements, when it is numeric
  // smdebug lost the saved value to the shape entry (see smdebug_index_peek.hpp), so it
  // raised where rulestream computes from the value.
  bool smdebug_lost_value = false;
};

// Checks the reduction against smdebug's answer, or, where rulestream deliberately differs
// (FORMAT.md, last section), against the test's own accurate computation:
// - saved reductions are read, not computed: dtype and bits must match exactly;
// - int8 tensors (smdebug computed on a uint8 reinterpretation): all against the reference;
// - l1/l2 of tensors that are not 1-D (smdebug's matrix norms, ValueError for 0-D and 3-D+,
//   LinAlgError when the SVD fails, TypeError for 2-D float16): element-wise norms;
// - integer sum/prod beyond int64 (smdebug wraps around): float64 of the exact result, and
//   smdebug's figure must be that exact result modulo 2^64;
// - float16 std/variance (numpy squares in float16 and overflows): the accurate figure;
// - any floating result numpy reports as +-Infinity while the accurate one is finite in the
//   dtype (numpy overflowed an intermediate in the tensor's dtype: float32 squares in
//   np.linalg.norm, float16 sums): the accurate figure;
// - values smdebug lost to their shape entry: computed reductions against the reference;
// - strings: every reduction raises (ReductionUnsupported for numpy's UFuncTypeError,
//   ValueError or TypeError).
void check_reduction(const ReductionCase& c, const Where& where, MismatchLog& log);

// A reduction the training job saved (the hook computed it with torch: std and variance with
// ddof = 1, l1/l2 element-wise) against the test's own figure from rulestream's value: a check
// that the value rulestream read is the one the hook saw, where smdebug could not read it.
void check_saved_against_value(ReductionKey key, const boost::json::value& saved,
                               const DecodedElements& elements, const Where& where,
                               MismatchLog& log);

// The largest |rulestream - smdebug| accepted for a reduction computed on read; see the
// comment in reduction_checks.cpp for the reasoning. 0 means exact.
double reduction_tolerance(DType result_dtype, ReductionKey key, const Magnitudes& data,
                           double expected);

}  // namespace rulestream::testing
