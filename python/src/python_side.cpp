#include "python/src/python_side.hpp"

#include <array>
#include <string_view>
#include <unordered_map>

namespace rulestream::python {
namespace {

// Members of the package's Python enums, by number. Held for the life of the process: the
// module cannot be unloaded, and releasing them during interpreter shutdown would run Python
// code after the interpreter is gone.
struct PythonSide {
  std::array<PyObject*, 5> modes{};        // index: the ModeKeys number (1..4)
  std::array<PyObject*, 3> step_states{};  // index: StepState's smdebug number (0..2)
  PyObject* mode_keys_type = nullptr;
};

// A new reference that is never released (see PythonSide).
PyObject* held(py::object object) {
  return object.release().ptr();
}

PythonSide& side() {
  static PythonSide instance;
  return instance;
}

}  // namespace

void load_python_side() {
  PythonSide& s = side();
  const py::object modes = py::module_::import("rulestream.modes");
  const py::object mode_keys = modes.attr("ModeKeys");
  s.mode_keys_type = mode_keys.inc_ref().ptr();
  for (const Mode mode : kAllModes) {
    s.modes[static_cast<std::size_t>(mode)] =
        held(mode_keys.attr(py::str(std::string(mode_name(mode)))));
  }
  const py::object step_state = py::module_::import("rulestream.tensor").attr("StepState");
  s.step_states[0] = held(step_state.attr("UNAVAILABLE"));
  s.step_states[1] = held(step_state.attr("AVAILABLE"));
  s.step_states[2] = held(step_state.attr("NOT_YET_AVAILABLE"));
}

Mode mode_argument(py::handle mode, Mode fallback) {
  if (mode.is_none()) return fallback;
  const PythonSide& s = side();
  // The common case, a ModeKeys member, by identity: no attribute lookups.
  for (const Mode known : kAllModes) {
    if (mode.ptr() == s.modes[static_cast<std::size_t>(known)]) return known;
  }
  if (py::isinstance<py::str>(mode)) {
    const std::string text = mode.cast<std::string>();
    if (const auto parsed = mode_from_name(text)) return *parsed;
    throw py::value_error("mode: \"" + text + "\" is not a mode (TRAIN, EVAL, PREDICT, GLOBAL)");
  }
  if (py::isinstance<py::int_>(mode) && !py::isinstance<py::bool_>(mode)) {
    const auto number = mode.cast<std::int64_t>();
    if (const auto parsed = mode_from_number(number)) return *parsed;
    throw py::value_error("mode: " + std::to_string(number) +
                          " is not a mode number (1 TRAIN, 2 EVAL, 3 PREDICT, 4 GLOBAL)");
  }
  throw py::type_error("mode: expected a rulestream.modes member (modes.TRAIN, ...), got " +
                       std::string(py::str(py::type::of(mode).attr("__name__"))));
}

py::object mode_object(Mode mode) {
  return py::reinterpret_borrow<py::object>(side().modes[static_cast<std::size_t>(mode)]);
}

py::object step_state_object(StepState state) {
  std::size_t index = 0;
  switch (state) {
    case StepState::Unavailable:
      index = 0;
      break;
    case StepState::Available:
      index = 1;
      break;
    case StepState::NotYetAvailable:
      index = 2;
      break;
  }
  return py::reinterpret_borrow<py::object>(side().step_states[index]);
}

py::object optional_int(std::optional<std::int64_t> value) {
  if (!value) return py::none();
  return py::int_(*value);
}

py::list int_list(const std::vector<std::int64_t>& values) {
  py::list list(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    PyList_SET_ITEM(list.ptr(), static_cast<Py_ssize_t>(i), PyLong_FromLongLong(values[i]));
  }
  return list;
}

py::list worker_list(const std::vector<std::string>& workers) {
  // Guarded by the GIL. Held for the life of the process, as PythonSide; bounded, since a
  // process may open many jobs: past the bound, names are made anew each time.
  static std::unordered_map<std::string, PyObject*> kept;
  constexpr std::size_t kMostKept = 4096;
  py::list list(workers.size());
  for (std::size_t i = 0; i < workers.size(); ++i) {
    PyObject* name = nullptr;
    if (const auto found = kept.find(workers[i]); found != kept.end()) {
      name = Py_NewRef(found->second);
    } else {
      name = py::str(workers[i]).release().ptr();
      if (kept.size() < kMostKept) kept.emplace(workers[i], Py_NewRef(name));
    }
    PyList_SET_ITEM(list.ptr(), static_cast<Py_ssize_t>(i), name);
  }
  return list;
}

}  // namespace rulestream::python
