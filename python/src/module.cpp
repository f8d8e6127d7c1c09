// The entry point of the Python module rulestream._rulestream (the package rulestream/ wraps
// it). Not part of the python floor's library, as main.cpp is not part of the CLI's.
#include <pybind11/pybind11.h>

#include "python/src/bindings.hpp"
#include "python/src/exceptions.hpp"
#include "python/src/python_side.hpp"

PYBIND11_MODULE(_rulestream, module) {
  namespace python = rulestream::python;
  module.doc() = "rulestream's C++ core: smdebug's Trial and Tensor, and the built-in rules";
  python::load_python_side();
  python::register_exception_translation();
  python::bind_trial(module);
  python::bind_tensor(module);
  python::bind_rules(module);
  python::bind_tensorboard(module);
}
