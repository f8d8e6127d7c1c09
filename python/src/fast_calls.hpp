#pragma once

#include <pybind11/pybind11.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace rulestream::python {

namespace py = pybind11;

// The methods a notebook calls once per value (`tensor.value(step, worker=w)`,
// `tensor.workers(step)`, `trial.tensor(name)`) go past pybind11's generic dispatcher: through
// it a call cost about as much as reading the value in C++ (callgrind: ~3,600 instructions for
// `value(step, worker=w)`, 1,500 of them the keyword, which pybind11 matches by building each
// parameter's name as a new string). These are plain CPython methods of the bound class, called
// with CPython's vectorcall convention (METH_FASTCALL | METH_KEYWORDS): arguments arrive as an
// array, keywords as a tuple of (usually interned) names matched by identity first.
// Everything here needs the GIL.

// Python's own argument binding for one method's parameters, all positional-or-keyword:
// TypeError, worded as Python words it, for too many positional arguments, an unknown or
// repeated keyword, or a missing required parameter.
class FastSignature {
 public:
  // `names` in order; the first `required` have no default.
  FastSignature(const char* method, std::initializer_list<const char*> names, std::size_t required);

  // Fills `slots` (one per parameter, borrowed references; nullptr where not given) from a
  // vectorcall's arguments. Returns false with a TypeError set.
  bool bind(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
            std::span<PyObject*> slots) const;

 private:
  std::ptrdiff_t find(PyObject* keyword) const;

  std::string method_;
  std::vector<PyObject*> names_;  // interned, held for the life of the process
  std::size_t required_;
};

// The C++ object of a pybind11 instance of T (`self` is one: the method's descriptor checked its
// type). nullptr with a TypeError set when no T was constructed in it (a Python subclass whose
// __init__ did not call the base's).
template <typename T>
T* bound_self(PyObject* self) {
  static const py::detail::type_info* const type = py::detail::get_type_info(typeid(T));
  auto* instance = reinterpret_cast<py::detail::instance*>(self);
  const py::detail::value_and_holder held = instance->get_value_and_holder(type, false);
  if (!held || !held.holder_constructed()) {
    PyErr_Format(PyExc_TypeError, "%s object is not initialised", Py_TYPE(self)->tp_name);
    return nullptr;
  }
  return held.template value_ptr<std::remove_const_t<T>>();
}

// Sets the Python error for the C++ exception being handled, as pybind11's dispatcher does:
// the module's translators (rulestream's exceptions as rulestream.exceptions classes,
// py::error_already_set restored, ...), else SystemError. Call inside `catch (...)`.
void set_error_from_current_exception();

// Calls `body()`, a py::object-returning callable, turning a C++ exception into the Python
// error it stands for: the shape of every fast method's body.
template <typename Body>
PyObject* guarded(const Body& body) noexcept {
  try {
    return body().release().ptr();
  } catch (...) {
    set_error_from_current_exception();
    return nullptr;
  }
}

// Releases the GIL for its scope (PyEval_SaveThread): as py::gil_scoped_release, without its
// bookkeeping for pybind11's own thread states, which these calls never make.
class GilReleased {
 public:
  GilReleased() : state_(PyEval_SaveThread()) {}
  ~GilReleased() { PyEval_RestoreThread(state_); }
  GilReleased(const GilReleased&) = delete;
  GilReleased& operator=(const GilReleased&) = delete;

 private:
  PyThreadState* state_;
};

// A fast method's whole call: binds the arguments by `signature`, finds self's T and runs
// `body(self, slots)` (slots: one borrowed argument per parameter, nullptr where not given),
// which returns a py::object; C++ exceptions become Python errors.
template <typename T, std::size_t N, typename Body>
PyObject* call_fast(PyObject* self, const FastSignature& signature, PyObject* const* args,
                    Py_ssize_t nargs, PyObject* kwnames, const Body& body) noexcept {
  std::array<PyObject*, N> slots{};
  if (!signature.bind(args, nargs, kwnames, slots)) return nullptr;
  T* bound = bound_self<T>(self);
  if (bound == nullptr) return nullptr;
  return guarded([&] { return body(*bound, slots); });
}

// An argument not given, as the None it defaults to.
inline py::handle or_none(PyObject* argument) {
  return argument != nullptr ? py::handle(argument) : py::handle(Py_None);
}

// Arguments as pybind11's casters take them, with their errors naming the parameter.
// An int, or an object with __index__ (numpy.int64); not a float.
std::int64_t int_argument(PyObject* argument, const char* parameter);
// None (or not given): nullopt; else a str.
std::optional<std::string> optional_str_argument(PyObject* argument, const char* parameter);
// A str.
std::string str_argument(PyObject* argument, const char* parameter);
// Not given: `fallback`; else the object's truth.
bool bool_argument(PyObject* argument, bool fallback);

using FastMethod = PyObject* (*)(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                                 PyObject* kwnames);

// Adds (or replaces) method `name` of the bound class `type`: `doc` starts with the signature
// as CPython writes it ("value($self, /, step_num, mode=None)\n--\n\n..."), which
// inspect.signature and help() read.
void add_fast_method(const py::handle& type, const char* name, FastMethod method, const char* doc);

}  // namespace rulestream::python
