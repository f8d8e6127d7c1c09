// The Trial of smdebug's API (seed 001) over rulestream's Trial: the same method names,
// arguments and defaults. The GIL is released while C++ works.
#include "trial/api/trial.hpp"

#include <pybind11/stl.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "core/model/storage_options.hpp"
#include "python/src/bindings.hpp"
#include "python/src/fast_calls.hpp"
#include "python/src/python_side.hpp"
#include "python/src/trial_handle.hpp"
#include "trial/api/tensor.hpp"

namespace rulestream::python {
namespace {

using py::arg;

// smdebug's `regex` argument: one pattern or a list of them.
std::vector<std::string> regex_argument(py::handle regex) {
  if (regex.is_none()) return {};
  if (py::isinstance<py::str>(regex)) return {regex.cast<std::string>()};
  try {
    return regex.cast<std::vector<std::string>>();
  } catch (const py::cast_error&) {
    throw py::type_error("regex: expected a string or a list of strings");
  }
}

// smdebug's `collection` argument: a Collection or its name.
std::optional<std::string> collection_argument(py::handle collection) {
  if (collection.is_none()) return std::nullopt;
  if (py::isinstance<py::str>(collection)) return collection.cast<std::string>();
  if (py::isinstance<Collection>(collection)) return collection.cast<const Collection&>().name;
  throw py::type_error("collection: expected a Collection or a collection's name");
}

std::vector<std::string> tensor_names(const TrialHandle& self, std::optional<std::int64_t> step,
                                      py::handle mode, py::handle regex, py::handle collection) {
  TensorNameQuery query;
  query.step = step;
  query.mode = mode_argument(mode);
  query.regex = regex_argument(regex);
  query.collection = collection_argument(collection);
  if (!query.regex.empty() && query.collection) {
    // As smdebug: the two filters are alternatives.
    throw py::value_error("Only one of `regex` or `collection` can be passed to this method");
  }
  const Trial trial = self.current();
  const py::gil_scoped_release unlocked;
  return trial.tensor_names(query);
}

// Trial::wait_for_steps without a timeout, in slices: between them the GIL is taken back to
// run Python's signal handlers, so that Ctrl-C (KeyboardInterrupt) ends a wait on a live job
// that would otherwise block a notebook for good.
void wait_for_steps(const Trial& trial, const std::vector<std::int64_t>& steps, Mode mode) {
  constexpr std::chrono::milliseconds kSlice{250};
  if (trial.is_pinned()) {
    // A pinned view (inside no_refresh) never sees new steps: it answers at once.
    const py::gil_scoped_release unlocked;
    trial.wait_for_steps(steps, mode);
    return;
  }
  while (true) {
    try {
      const py::gil_scoped_release unlocked;
      trial.wait_for_steps(steps, mode, kSlice);
      return;
    } catch (const StepNotYetAvailable&) {
      // The slice passed with a step still to come.
    }
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  }
}

// smdebug's range_steps=(begin, end), either end None.
void set_range(TrialOptions& options, py::handle range_steps) {
  if (range_steps.is_none()) return;
  const auto range = range_steps.cast<py::sequence>();
  if (range.size() != 2) {
    throw py::value_error("range_steps: expected (begin, end), either of them None");
  }
  if (!range[0].is_none()) options.range_begin = range[0].cast<std::int64_t>();
  if (!range[1].is_none()) options.range_end = range[1].cast<std::int64_t>();
}

// How many event files a trial opened from Python keeps mapped (StorageOptions). A notebook
// reads tensor by tensor (`for name: for step: value`), each value from another event file:
// with a pipeline's 16 kept mappings, every value was an open, a read and a close, and reading
// pipeline_e2e's small job that way was 3-4x slower than with every file kept
// (benchmarks/RESULTS.md). 1,024 covers the event files of most jobs (one per step and worker);
// the lease cap (RLIMIT_NOFILE / 4, sources/local/file_leases.hpp) bounds it where descriptors
// are few, and reads beyond it copy.
constexpr std::size_t kNotebookKeptMappings = 1024;

TrialHandle open_trial(const std::string& path, std::optional<std::string> name,
                       py::handle range_steps) {
  TrialOptions options;
  if (name) options.name = *name;
  set_range(options, range_steps);
  StorageOptions storage;
  storage.local_kept_mappings = kNotebookKeptMappings;
  std::optional<Trial> trial;
  {
    const py::gil_scoped_release unlocked;
    trial = Trial::open(path, std::move(options), storage);
  }
  return TrialHandle(std::move(*trial));  // with the GIL: it holds Python objects
}

// smdebug's trial.tensor: one Python Tensor per name for the trial itself (TrialHandle::
// tensors); inside no_refresh, a Tensor of the pinned view, made each time.
py::object tensor_of(TrialHandle& self, const py::str& tname) {
  const bool keep = !self.is_pinned();
  py::dict& kept = self.tensors();
  if (keep) {
    // Borrowed; the dict's own lookup, without building a std::string.
    if (PyObject* found = PyDict_GetItemWithError(kept.ptr(), tname.ptr())) {
      return py::reinterpret_borrow<py::object>(found);
    }
    if (PyErr_Occurred() != nullptr) throw py::error_already_set();
  }
  const std::string name = tname;
  const Trial trial = self.current();
  std::optional<Tensor> made;
  {
    const py::gil_scoped_release unlocked;
    made = trial.tensor(name);
  }
  py::object tensor = py::cast(std::move(*made));
  if (keep) kept[tname] = tensor;
  return tensor;
}

// trial.tensor(name) past pybind11's dispatcher (fast_calls.hpp): a notebook reading step by
// step asks for it once per name and step.
PyObject* fast_tensor(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  static const FastSignature signature("tensor", {"tname"}, 1);
  return call_fast<TrialHandle, 1>(
      self, signature, args, nargs, kwnames, [](TrialHandle& handle, const auto& slot) {
        if (!PyUnicode_Check(slot[0])) {
          throw py::type_error(std::string("tname: expected a str, got ") +
                               Py_TYPE(slot[0])->tp_name);
        }
        return tensor_of(handle, py::reinterpret_borrow<py::str>(slot[0]));
      });
}

void bind_collection(py::module_& module) {
  py::class_<ReductionConfig>(module, "ReductionConfig",
                              "Which reductions a collection saves (smdebug's ReductionConfig).")
      .def_readonly("save_raw_tensor", &ReductionConfig::save_raw_tensor)
      .def_readonly("save_shape", &ReductionConfig::save_shape)
      .def_property_readonly(
          "reductions",
          [](const ReductionConfig& config) {
            // In the configuration's order, as their saved tensors are named ("abs_mean").
            std::vector<std::string> names;
            for (const ReductionKey key : config.reductions)
              names.push_back(reduction_key_name(key));
            return names;
          },
          "Every configured reduction; those of absolute values prefixed 'abs_'.");

  py::class_<Collection>(module, "Collection", "A named group of tensors the hook declared.")
      .def_readonly("name", &Collection::name)
      .def_readonly("include_regex", &Collection::include_regex)
      .def_readonly("tensor_names", &Collection::tensor_names)
      .def_readonly("reduction_config", &Collection::reduction_config)
      .def_readonly("save_histogram", &Collection::save_histogram)
      .def("__repr__", [](const Collection& collection) {
        return "<Collection " + collection.name + ": " +
               std::to_string(collection.tensor_names.size()) + " tensors>";
      });
}

}  // namespace

void bind_trial(py::module_& module) {
  bind_collection(module);

  py::class_<TrialHandle> trial_class(
      module, "Trial", "A training job's saved tensors, as smdebug's Trial (seed 001).");
  trial_class
      .def_property_readonly("name", [](const TrialHandle& self) { return self.trial().name(); })
      .def_property_readonly("path", [](const TrialHandle& self) { return self.trial().path(); })
      .def("tensor_names", &tensor_names, arg("step") = py::none(), arg("mode") = py::none(),
           arg("regex") = py::none(), arg("collection") = py::none(),
           "Names of the tensors saved, filtered by step (of `mode`), regex or collection.")
      // The name seed 000's example rule uses (smdebug's older spelling of tensor_names).
      .def("tensors", &tensor_names, arg("step") = py::none(), arg("mode") = py::none(),
           arg("regex") = py::none(), arg("collection") = py::none())
      .def(
          "has_tensor",
          [](const TrialHandle& self, const std::string& tname) {
            const Trial trial = self.current();
            const py::gil_scoped_release unlocked;
            return trial.has_tensor(tname);
          },
          arg("tname"))
      .def(
          "steps",
          [](const TrialHandle& self, py::handle mode, bool show_incomplete_steps) {
            const Mode m = mode_argument(mode);
            const Trial trial = self.current();
            std::vector<std::int64_t> steps;
            {
              const py::gil_scoped_release unlocked;
              steps = trial.steps(m, show_incomplete_steps);
            }
            return int_list(steps);
          },
          arg("mode") = py::none(), arg("show_incomplete_steps") = false)
      .def("modes",
           [](const TrialHandle& self) {
             const Trial trial = self.current();
             std::vector<Mode> modes;
             {
               const py::gil_scoped_release unlocked;
               modes = trial.modes();
             }
             py::list list;
             for (const Mode mode : modes) list.append(mode_object(mode));
             return list;
           })
      .def(
          "mode",
          [](const TrialHandle& self, std::int64_t global_step) -> py::object {
            const auto mode = self.current().mode(global_step);
            return mode ? mode_object(*mode) : py::none();
          },
          arg("global_step"))
      .def(
          "mode_step",
          [](const TrialHandle& self, std::int64_t global_step) {
            return optional_int(self.current().mode_step(global_step));
          },
          arg("global_step"))
      .def(
          "mode_modestep",
          [](const TrialHandle& self, std::int64_t global_step) {
            const Trial trial = self.current();
            const auto mode = trial.mode(global_step);
            return py::make_tuple(mode ? mode_object(*mode) : py::none(),
                                  optional_int(trial.mode_step(global_step)));
          },
          arg("global_step"))
      .def(
          "global_step",
          [](const TrialHandle& self, py::handle mode, std::int64_t mode_step) {
            return optional_int(self.current().global_step(mode_argument(mode), mode_step));
          },
          arg("mode"), arg("mode_step"))
      .def("workers", [](const TrialHandle& self) { return worker_list(self.current().workers()); })
      .def_property_readonly("num_workers",
                             [](const TrialHandle& self) { return self.current().num_workers(); })
      .def("collections", [](const TrialHandle& self) { return self.current().collections(); })
      .def(
          "collection",
          [](const TrialHandle& self, const std::string& coll_name) {
            return self.current().collection(coll_name);
          },
          arg("coll_name"))
      .def(
          "wait_for_steps",
          [](const TrialHandle& self, const std::vector<std::int64_t>& required_steps,
             py::handle mode) {
            wait_for_steps(self.current(), required_steps, mode_argument(mode));
          },
          arg("required_steps"), arg("mode") = py::none(),
          "Blocks until every step is available; StepUnavailable or NoMoreData when one never "
          "will be.")
      .def(
          "has_passed_step",
          [](const TrialHandle& self, std::int64_t step, py::handle mode) {
            const Mode m = mode_argument(mode);
            const Trial trial = self.current();
            StepState state{};
            {
              const py::gil_scoped_release unlocked;
              state = trial.has_passed_step(step, m);
            }
            return step_state_object(state);
          },
          arg("step"), arg("mode") = py::none())
      .def("refresh",
           [](const TrialHandle& self) {
             const Trial trial = self.trial();
             const py::gil_scoped_release unlocked;
             trial.refresh();
           })
      .def_property_readonly(
          "loaded_all_steps",
          [](const TrialHandle& self) { return self.current().loaded_all_steps(); })
      .def_property_readonly(
          "last_complete_step",
          [](const TrialHandle& self) { return self.current().last_complete_step(); })
      .def_property_readonly(
          "training_ended",
          [](const TrialHandle& self) { return self.current().has_training_ended(); })
      .def("_pin", &TrialHandle::pin, "Enters a no_refresh block (rulestream.no_refresh).")
      .def("_unpin", &TrialHandle::unpin, "Leaves a no_refresh block.")
      .def("__repr__", [](const TrialHandle& self) {
        return "<rulestream Trial " + self.trial().name() + " at " + self.trial().path() + ">";
      });

  add_fast_method(trial_class, "tensor", &fast_tensor,
                  "tensor($self, /, tname)\n--\n\nThe tensor named `tname` (one object per name).");

  module.def("_open_trial", &open_trial, arg("path"), arg("name") = py::none(),
             arg("range_steps") = py::none());
}

}  // namespace rulestream::python
