#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/model/mode.hpp"
#include "trial/api/trial.hpp"

namespace rulestream::python {

namespace py = pybind11;

// The objects the package defines in Python (rulestream/modes.py, rulestream/tensor.py) that
// the bindings hand out: smdebug's ModeKeys members and StepState members. Looked up once, when
// the module is imported (load_python_side); read with the GIL held.
void load_python_side();

// A `mode=` argument as smdebug takes it: a ModeKeys member (rulestream.modes.TRAIN), or, for
// convenience, its number or name ("TRAIN"). None is `fallback`. TypeError or ValueError
// naming the argument for anything else.
Mode mode_argument(py::handle mode, Mode fallback = Mode::Global);
py::object mode_object(Mode mode);                           // rulestream.modes.ModeKeys member
py::object step_state_object(StepState state);               // rulestream.tensor.StepState member
py::object optional_int(std::optional<std::int64_t> value);  // None for nullopt

// smdebug's step lists and worker lists as Python lists (faster than pybind11's generic caster
// for the long step lists a notebook asks for again and again).
py::list int_list(const std::vector<std::int64_t>& values);
// Each worker name is made a Python str once and handed out again (strings are immutable): a
// notebook asks for a tensor's workers at every step, and making new strings each time cost
// about as much as reading a small value (callgrind).
py::list worker_list(const std::vector<std::string>& workers);

}  // namespace rulestream::python
