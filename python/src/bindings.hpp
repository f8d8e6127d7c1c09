#pragma once

#include <pybind11/pybind11.h>

namespace rulestream::python {

namespace py = pybind11;

// Each binds one concept into the module `rulestream._rulestream` (module.cpp calls them in
// this order: a class must be bound before a later one's signatures name it).
void bind_trial(py::module_& module);        // trial.cpp: Trial, Collection, ReductionConfig, open
void bind_tensor(py::module_& module);       // tensor.cpp: Tensor
void bind_rules(py::module_& module);        // rules.cpp: built-in rules by name
void bind_tensorboard(py::module_& module);  // tensorboard.cpp: TensorBoard logdirs

}  // namespace rulestream::python
