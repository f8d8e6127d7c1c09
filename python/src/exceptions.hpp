#pragma once

#include <pybind11/pybind11.h>

namespace rulestream::python {

// Raises rulestream's C++ exceptions as the Python classes of rulestream/exceptions.py, which
// carry smdebug's names, constructor arguments and attributes (TensorUnavailableForStep has
// .tname, .step, .mode), with the C++ message (it names the tensor, step and file) as their text.
// Call once, at import, after load_python_side().
void register_exception_translation();

}  // namespace rulestream::python
