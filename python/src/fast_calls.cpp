#include "python/src/fast_calls.hpp"

#include <deque>

namespace rulestream::python {

FastSignature::FastSignature(const char* method, std::initializer_list<const char*> names,
                             std::size_t required)
    : method_(method), required_(required) {
  for (const char* name : names) {
    PyObject* interned = PyUnicode_InternFromString(name);
    if (interned == nullptr) throw py::error_already_set();
    names_.push_back(interned);  // never released: see python_side.cpp
  }
}

std::ptrdiff_t FastSignature::find(PyObject* keyword) const {
  // Keywords written at a call site are interned, as ours are: identity almost always answers.
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (keyword == names_[i]) return static_cast<std::ptrdiff_t>(i);
  }
  for (std::size_t i = 0; i < names_.size(); ++i) {
    // Equal text in another string object (a **kwargs dict built at run time).
    if (PyUnicode_Check(keyword) && PyUnicode_Compare(keyword, names_[i]) == 0) {
      return static_cast<std::ptrdiff_t>(i);
    }
  }
  return -1;
}

bool FastSignature::bind(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                         std::span<PyObject*> slots) const {
  const auto positional = static_cast<std::size_t>(nargs);
  if (positional > names_.size()) {
    PyErr_Format(PyExc_TypeError, "%s() takes at most %zu arguments (%zd given)", method_.c_str(),
                 names_.size(), nargs);
    return false;
  }
  for (std::size_t i = 0; i < slots.size(); ++i) slots[i] = i < positional ? args[i] : nullptr;
  if (kwnames != nullptr) {
    const Py_ssize_t keywords = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < keywords; ++k) {
      PyObject* keyword = PyTuple_GET_ITEM(kwnames, k);
      const std::ptrdiff_t at = find(keyword);
      if (at < 0) {
        PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%S'",
                     method_.c_str(), keyword);
        return false;
      }
      if (slots[static_cast<std::size_t>(at)] != nullptr) {
        PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%S'", method_.c_str(),
                     names_[static_cast<std::size_t>(at)]);
        return false;
      }
      slots[static_cast<std::size_t>(at)] = args[nargs + k];
    }
  }
  for (std::size_t i = 0; i < required_; ++i) {
    if (slots[i] == nullptr) {
      PyErr_Format(PyExc_TypeError, "%s() missing required argument '%S' (pos %zu)",
                   method_.c_str(), names_[i], i + 1);
      return false;
    }
  }
  return true;
}

std::int64_t int_argument(PyObject* argument, const char* parameter) {
  py::object index;
  if (!PyLong_Check(argument)) {
    if (PyFloat_Check(argument) || !PyIndex_Check(argument)) {
      throw py::type_error(std::string(parameter) + ": expected an integer, got " +
                           Py_TYPE(argument)->tp_name);
    }
    index = py::reinterpret_steal<py::object>(PyNumber_Index(argument));
    if (!index) throw py::error_already_set();
    argument = index.ptr();
  }
  const long long value = PyLong_AsLongLong(argument);
  if (value == -1 && PyErr_Occurred() != nullptr) throw py::error_already_set();
  return value;
}

std::optional<std::string> optional_str_argument(PyObject* argument, const char* parameter) {
  if (argument == nullptr || argument == Py_None) return std::nullopt;
  return str_argument(argument, parameter);
}

std::string str_argument(PyObject* argument, const char* parameter) {
  if (!PyUnicode_Check(argument)) {
    throw py::type_error(std::string(parameter) + ": expected a str, got " +
                         Py_TYPE(argument)->tp_name);
  }
  Py_ssize_t size = 0;
  const char* text = PyUnicode_AsUTF8AndSize(argument, &size);
  if (text == nullptr) throw py::error_already_set();
  return {text, static_cast<std::size_t>(size)};
}

bool bool_argument(PyObject* argument, bool fallback) {
  if (argument == nullptr) return fallback;
  const int truth = PyObject_IsTrue(argument);
  if (truth < 0) throw py::error_already_set();
  return truth != 0;
}

void set_error_from_current_exception() {
  // As pybind11::cpp_function::dispatcher: the module-local translators, then the global ones
  // (rulestream's, registered by register_exception_translation, and pybind11's default, which
  // restores a py::error_already_set and maps the standard exceptions).
  auto& local = py::detail::get_local_internals().registered_exception_translators;
  if (py::detail::apply_exception_translators(local)) return;
  auto& global = py::detail::get_internals().registered_exception_translators;
  if (py::detail::apply_exception_translators(global)) return;
  PyErr_SetString(PyExc_SystemError, "Exception escaped from default exception translator!");
}

void add_fast_method(const py::handle& type, const char* name, FastMethod method, const char* doc) {
  // CPython keeps a pointer to the PyMethodDef for as long as the method exists: the module's
  // classes live as long as the process, so the definitions do too (a deque never moves them).
  static std::deque<PyMethodDef> definitions;
  PyMethodDef& definition = definitions.emplace_back();
  definition.ml_name = name;
  definition.ml_meth = reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(method));
  definition.ml_flags = METH_FASTCALL | METH_KEYWORDS;
  definition.ml_doc = doc;
  auto descriptor = py::reinterpret_steal<py::object>(
      PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(type.ptr()), &definition));
  if (!descriptor) throw py::error_already_set();
  // A heap type's dict is changed through setattr, which also clears the type's method cache.
  if (PyObject_SetAttrString(type.ptr(), name, descriptor.ptr()) != 0) {
    throw py::error_already_set();
  }
}

}  // namespace rulestream::python
