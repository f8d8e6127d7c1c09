// TensorBoard logdirs from Python: the logdir read in C++ (TensorBoardLogdir) and handed to
// rulestream/tensorboard.py as numpy arrays, one set per series, which builds smdebug's Trial
// API over them. The GIL is released while C++ reads.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "python/src/bindings.hpp"
#include "python/src/tensorboard_logdir.hpp"
#include "sources/open/storage_factory.hpp"

namespace rulestream::python {
namespace {

using py::arg;

template <typename Figure>
py::array_t<double> column(const std::vector<TensorBoardPoint>& points, Figure figure) {
  py::array_t<double> result(static_cast<py::ssize_t>(points.size()));
  double* out = result.mutable_data();
  for (const TensorBoardPoint& point : points) *out++ = figure(point);
  return result;
}

py::array_t<std::int64_t> steps_of(const std::vector<TensorBoardPoint>& points) {
  py::array_t<std::int64_t> result(static_cast<py::ssize_t>(points.size()));
  std::int64_t* out = result.mutable_data();
  for (const TensorBoardPoint& point : points) *out++ = point.step;
  return result;
}

// One series as rulestream/tensorboard.py takes it: names, kind, and a column per figure.
py::dict series_dict(const TensorBoardSeries& series) {
  py::dict result;
  result["run"] = series.run;
  result["tag"] = series.tag;
  result["kind"] = std::string(tag_kind_name(series.kind));
  result["preempted"] = series.preempted;
  const auto& points = series.points;
  result["steps"] = steps_of(points);
  result["wall_times"] = column(points, [](const TensorBoardPoint& p) { return p.wall_time; });
  if (series.kind == TagKind::Scalar) {
    result["values"] = column(points, [](const TensorBoardPoint& p) { return p.scalar; });
    return result;
  }
  constexpr double kAbsent = std::numeric_limits<double>::quiet_NaN();
  result["min"] = column(points, [](const TensorBoardPoint& p) { return p.histogram.min; });
  result["max"] = column(points, [](const TensorBoardPoint& p) { return p.histogram.max; });
  result["num"] = column(points, [](const TensorBoardPoint& p) { return p.histogram.num; });
  result["sum"] = column(points, [](const TensorBoardPoint& p) { return p.histogram.sum; });
  result["mean"] = column(points, [](const TensorBoardPoint& p) { return p.histogram.mean(); });
  // A [k,3] histogram tensor carries no sum of squares: NaN there.
  result["sum_squares"] = column(
      points, [&](const TensorBoardPoint& p) { return p.histogram.sum_squares.value_or(kAbsent); });
  return result;
}

// The logdir (or folder of text metrics) at `path`, or None where the path holds an smdebug
// trial or nothing yet (then it is opened as an smdebug trial, which says what is wrong).
std::optional<std::shared_ptr<const TensorBoardLogdir>> open_logdir(const std::string& path) {
  const py::gil_scoped_release unlocked;
  const std::shared_ptr<const Storage> storage = open_storage(path);
  const std::optional<TrialFormat> format = series_format_held(*storage);
  if (!format) return std::nullopt;
  return std::make_shared<const TensorBoardLogdir>(*storage, *format);
}

}  // namespace

void bind_tensorboard(py::module_& module) {
  py::class_<TensorBoardLogdir, std::shared_ptr<TensorBoardLogdir>>(
      module, "_TensorBoardLogdir",
      "A TensorBoard logdir as read once (rulestream.tensorboard.TensorBoardTrial wraps it).")
      .def_property_readonly("path", &TensorBoardLogdir::path)
      .def_property_readonly("runs", &TensorBoardLogdir::runs)
      .def_property_readonly("problems", &TensorBoardLogdir::problems)
      .def_property_readonly(
          "other_tags",
          [](const TensorBoardLogdir& self) {
            py::list tags;
            for (const TensorBoardOtherTag& tag : self.other_tags()) {
              tags.append(py::make_tuple(tag.run, tag.tag, std::string(tag_kind_name(tag.kind))));
            }
            return tags;
          })
      .def_property_readonly("series", [](const TensorBoardLogdir& self) {
        py::list series;
        for (const TensorBoardSeries& one : self.series()) series.append(series_dict(one));
        return series;
      });
  module.def(
      "_open_tensorboard_logdir",
      [](const std::string& path) -> py::object {
        auto logdir = open_logdir(path);
        if (!logdir) return py::none();
        return py::cast(std::const_pointer_cast<TensorBoardLogdir>(*logdir));
      },
      arg("path"),
      "The TensorBoard logdir at `path`, read now; None when the path holds an smdebug trial or "
      "neither yet.");
}

}  // namespace rulestream::python
