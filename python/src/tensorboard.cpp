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

template <typename Point, typename Figure>
py::array_t<double> column(const std::vector<Point>& points, Figure figure) {
  py::array_t<double> result(static_cast<py::ssize_t>(points.size()));
  double* out = result.mutable_data();
  for (const Point& point : points) *out++ = figure(point);
  return result;
}

template <typename Point>
py::array_t<std::int64_t> steps_of(const std::vector<Point>& points) {
  py::array_t<std::int64_t> result(static_cast<py::ssize_t>(points.size()));
  std::int64_t* out = result.mutable_data();
  for (const Point& point : points) *out++ = point.step;
  return result;
}

// One series as rulestream/tensorboard.py takes it: names, kind, and a column per figure.
py::dict series_dict(const StoredSeries& series) {
  py::dict result;
  result["run"] = series.run;
  result["tag"] = series.tag;
  result["kind"] = std::string(tag_kind_name(series.kind));
  result["preempted"] = series.preempted;
  if (series.kind == TagKind::Scalar) {
    const auto& points = series.scalars;
    result["steps"] = steps_of(points);
    result["wall_times"] = column(points, [](const StoredScalar& p) { return p.wall_time; });
    result["values"] = column(points, [](const StoredScalar& p) { return p.value; });
    return result;
  }
  constexpr double kAbsent = std::numeric_limits<double>::quiet_NaN();
  using Point = StoredHistogram;
  const auto& points = series.histograms;
  result["steps"] = steps_of(points);
  result["wall_times"] = column(points, [](const Point& p) { return p.wall_time; });
  result["min"] = column(points, [](const Point& p) { return p.figures.min; });
  result["max"] = column(points, [](const Point& p) { return p.figures.max; });
  result["num"] = column(points, [](const Point& p) { return p.figures.num; });
  result["sum"] = column(points, [](const Point& p) { return p.figures.sum; });
  result["mean"] = column(points, [](const Point& p) { return p.figures.mean(); });
  // A [k,3] histogram tensor carries no sum of squares: NaN there.
  result["sum_squares"] =
      column(points, [&](const Point& p) { return p.figures.sum_squares.value_or(kAbsent); });
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
      .def_property_readonly("other_tags",
                             [](const TensorBoardLogdir& self) {
                               py::list tags;
                               for (const StoredSeries* tag : self.other_tags()) {
                                 tags.append(py::make_tuple(tag->run, tag->tag,
                                                            std::string(tag_kind_name(tag->kind))));
                               }
                               return tags;
                             })
      .def_property_readonly("series", [](const TensorBoardLogdir& self) {
        py::list series;
        for (const StoredSeries* one : self.series()) series.append(series_dict(*one));
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
