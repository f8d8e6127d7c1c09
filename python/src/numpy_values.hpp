#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "core/model/reduction.hpp"
#include "core/model/tensor_value.hpp"

namespace rulestream::python {

namespace py = pybind11;

// A tensor's value as the numpy.ndarray smdebug returns: its dtype and shape, C order.
// Zero-copy where the bytes sit in a kept whole-file mapping (SharedBytes::in_kept_mapping):
// the array is then a read-only view whose base keeps the mapping alive however long the array
// lives. Copied otherwise (a buffer the trial reuses, a cache's bytes, an S3 or inflated copy):
// a writable array of its own. Strings become numpy's '<U' array, as smdebug's np.array(list);
// bfloat16, which numpy lacks, becomes float32 (exactly). Needs the GIL.
py::object to_numpy(const TensorValue& value);

// A reduction as smdebug returns it: computed, a numpy scalar of numpy's result dtype
// (numpy.float32 for a float32 tensor's mean, numpy.int64 for an int32 tensor's sum,
// numpy.bool_ for a bool's min); read from a reduction the job saved (`as_array`), the 0-d
// numpy.ndarray smdebug decodes it as.
py::object to_numpy_scalar(const Scalar& scalar, bool as_array = false);

}  // namespace rulestream::python
