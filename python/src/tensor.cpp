// The Tensor of smdebug's API (seed 001): values as numpy arrays, reductions as numpy scalars,
// the same method names, arguments and defaults. The GIL is released while C++ reads.
#include "trial/api/tensor.hpp"

#include <pybind11/stl.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "python/src/bindings.hpp"
#include "python/src/fast_calls.hpp"
#include "python/src/numpy_values.hpp"
#include "python/src/python_side.hpp"

namespace rulestream::python {
namespace {

using py::arg;
using Worker = std::optional<std::string>;

Reduction reduction_argument(const std::string& name) {
  if (const auto reduction = reduction_from_name(name)) return *reduction;
  throw py::value_error("reduction_name: \"" + name +
                        "\" is not a reduction (min, max, mean, prod, std, variance, sum, l1, "
                        "l2)");
}

py::object reduction_value(const Tensor& self, std::int64_t step_num,
                           const std::string& reduction_name, py::handle mode, const Worker& worker,
                           bool abs) {
  const Reduction reduction = reduction_argument(reduction_name);
  const Mode m = mode_argument(mode);
  Scalar figure;
  bool saved = false;
  {
    const py::gil_scoped_release unlocked;
    figure = self.reduction_value(step_num, reduction, m, worker, abs);
    // smdebug hands a reduction the job saved back as the 0-d array it read.
    const std::vector<ReductionKey> saved_keys = self.saved_reductions(step_num, m, worker);
    saved = std::find(saved_keys.begin(), saved_keys.end(), ReductionKey{reduction, abs}) !=
            saved_keys.end();
  }
  return to_numpy_scalar(figure, saved);
}

py::dict reduction_values(const Tensor& self, std::int64_t step_num, py::handle mode,
                          const Worker& worker) {
  const Mode m = mode_argument(mode);
  std::map<ReductionKey, Scalar> saved;
  {
    const py::gil_scoped_release unlocked;
    saved = self.reduction_values(step_num, m, worker);
  }
  // smdebug's keys: (reduction name, abs); its values the 0-d arrays it read.
  py::dict result;
  for (const auto& [key, figure] : saved) {
    result[py::make_tuple(std::string(reduction_name(key.reduction)), key.abs)] =
        to_numpy_scalar(figure, true);
  }
  return result;
}

py::dict values(const Tensor& self, py::handle mode, const Worker& worker) {
  const Mode m = mode_argument(mode);
  std::map<std::int64_t, TensorValue> read;
  {
    const py::gil_scoped_release unlocked;
    read = self.values(m, worker);
  }
  py::dict result;
  for (const auto& [step, step_value] : read) {
    const py::int_ key(step);
    if (PyDict_SetItem(result.ptr(), key.ptr(), to_numpy(step_value).ptr()) != 0) {
      throw py::error_already_set();
    }
  }
  return result;
}

// The hot methods, past pybind11's dispatcher (fast_calls.hpp): the same parameters, defaults
// and errors as the pybind11 definitions in bind_tensor, which they replace.

PyObject* fast_value(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  static const FastSignature signature("value", {"step_num", "mode", "worker"}, 1);
  return call_fast<const Tensor, 3>(
      self, signature, args, nargs, kwnames, [](const Tensor& tensor, const auto& slot) {
        const std::int64_t step = int_argument(slot[0], "step_num");
        const Mode m = mode_argument(or_none(slot[1]));
        const Worker worker = optional_str_argument(slot[2], "worker");
        TensorValue read;
        {
          const GilReleased unlocked;
          read = tensor.value(step, m, worker);
        }
        return to_numpy(read);
      });
}

PyObject* fast_workers(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  static const FastSignature signature("workers", {"step_num", "mode"}, 1);
  return call_fast<const Tensor, 2>(self, signature, args, nargs, kwnames,
                                    [](const Tensor& tensor, const auto& slot) {
                                      const std::int64_t step = int_argument(slot[0], "step_num");
                                      const Mode m = mode_argument(or_none(slot[1]));
                                      std::vector<std::string> workers;
                                      {
                                        const GilReleased unlocked;
                                        workers = tensor.workers(step, m);
                                      }
                                      return py::object(worker_list(workers));
                                    });
}

PyObject* fast_steps(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  static const FastSignature signature("steps", {"mode", "show_incomplete_steps"}, 0);
  return call_fast<const Tensor, 2>(
      self, signature, args, nargs, kwnames, [](const Tensor& tensor, const auto& slot) {
        const Mode m = mode_argument(or_none(slot[0]));
        const bool show_incomplete_steps = bool_argument(slot[1], false);
        std::vector<std::int64_t> steps;
        {
          const GilReleased unlocked;
          steps = tensor.steps(m, show_incomplete_steps);
        }
        return py::object(int_list(steps));
      });
}

PyObject* fast_reduction_value(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                               PyObject* kwnames) {
  static const FastSignature signature("reduction_value",
                                       {"step_num", "reduction_name", "mode", "worker", "abs"}, 2);
  return call_fast<const Tensor, 5>(
      self, signature, args, nargs, kwnames, [](const Tensor& tensor, const auto& slot) {
        return reduction_value(tensor, int_argument(slot[0], "step_num"),
                               str_argument(slot[1], "reduction_name"), or_none(slot[2]),
                               optional_str_argument(slot[3], "worker"),
                               bool_argument(slot[4], false));
      });
}

}  // namespace

void bind_tensor(py::module_& module) {
  py::class_<Tensor> tensor(module, "Tensor",
                            "One tensor across steps and workers, as smdebug's Tensor (seed 001).");
  tensor.def_property_readonly("name", &Tensor::name)
      .def("reduction_values", &reduction_values, arg("step_num"), arg("mode") = py::none(),
           arg("worker") = py::none())
      .def("values", &values, arg("mode") = py::none(), arg("worker") = py::none())
      .def(
          "prev_steps",
          [](const Tensor& self, std::int64_t step, std::size_t n, py::handle mode) {
            const Mode m = mode_argument(mode);
            std::vector<std::int64_t> steps;
            {
              const py::gil_scoped_release unlocked;
              steps = self.prev_steps(step, n, m);
            }
            return int_list(steps);
          },
          arg("step"), arg("n"), arg("mode") = py::none())
      .def(
          "shape",
          [](const Tensor& self, std::int64_t step_num, py::handle mode, const Worker& worker) {
            const Mode m = mode_argument(mode);
            Shape shape;
            {
              const py::gil_scoped_release unlocked;
              shape = self.shape(step_num, m, worker);
            }
            py::tuple result(shape.size());
            for (std::size_t i = 0; i < shape.size(); ++i) result[i] = py::int_(shape[i]);
            return result;
          },
          arg("step_num"), arg("mode") = py::none(), arg("worker") = py::none())
      .def("__repr__",
           [](const Tensor& self) { return "<rulestream Tensor " + self.name() + ">"; });
  add_fast_method(tensor, "value", &fast_value,
                  "value($self, /, step_num, mode=None, worker=None)\n--\n\n"
                  "The value at a step of `mode` as a numpy.ndarray (read-only where it is a view "
                  "of the mapped file).");
  add_fast_method(tensor, "workers", &fast_workers,
                  "workers($self, /, step_num, mode=None)\n--\n\n"
                  "The workers that saved the tensor at the step.");
  add_fast_method(tensor, "steps", &fast_steps,
                  "steps($self, /, mode=None, show_incomplete_steps=False)\n--\n\n"
                  "The steps of `mode` at which the tensor was saved.");
  add_fast_method(tensor, "reduction_value", &fast_reduction_value,
                  "reduction_value($self, /, step_num, reduction_name, mode=None, worker=None, "
                  "abs=False)\n--\n\n"
                  "A reduction of the value: the one the job saved, else computed.");
}

}  // namespace rulestream::python
