// The Tensor of smdebug's API (seed 001): values as numpy arrays, reductions as numpy scalars,
// the same method names, arguments and defaults. The GIL is released while C++ reads.
#include "pipeline/trial/tensor.hpp"

#include <pybind11/stl.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "python/src/bindings.hpp"
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

py::object value(const Tensor& self, std::int64_t step_num, py::handle mode, const Worker& worker) {
  const Mode m = mode_argument(mode);
  TensorValue read;
  {
    const py::gil_scoped_release unlocked;
    read = self.value(step_num, m, worker);
  }
  return to_numpy(read);
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
  for (const auto& [step, step_value] : read) result[py::int_(step)] = to_numpy(step_value);
  return result;
}

}  // namespace

void bind_tensor(py::module_& module) {
  py::class_<Tensor>(module, "Tensor",
                     "One tensor across steps and workers, as smdebug's Tensor (seed 001).")
      .def_property_readonly("name", &Tensor::name)
      .def(
          "steps",
          [](const Tensor& self, py::handle mode, bool show_incomplete_steps) {
            const Mode m = mode_argument(mode);
            std::vector<std::int64_t> steps;
            {
              const py::gil_scoped_release unlocked;
              steps = self.steps(m, show_incomplete_steps);
            }
            return int_list(steps);
          },
          arg("mode") = py::none(), arg("show_incomplete_steps") = false)
      .def("value", &value, arg("step_num"), arg("mode") = py::none(), arg("worker") = py::none(),
           "The value at a step of `mode` as a numpy.ndarray (read-only where it is a view of "
           "the mapped file).")
      .def("reduction_value", &reduction_value, arg("step_num"), arg("reduction_name"),
           arg("mode") = py::none(), arg("worker") = py::none(), arg("abs") = false)
      .def("reduction_values", &reduction_values, arg("step_num"), arg("mode") = py::none(),
           arg("worker") = py::none())
      .def("values", &values, arg("mode") = py::none(), arg("worker") = py::none())
      .def(
          "workers",
          [](const Tensor& self, std::int64_t step_num, py::handle mode) {
            const Mode m = mode_argument(mode);
            std::vector<std::string> workers;
            {
              const py::gil_scoped_release unlocked;
              workers = self.workers(step_num, m);
            }
            return str_list(workers);
          },
          arg("step_num"), arg("mode") = py::none())
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
}

}  // namespace rulestream::python
