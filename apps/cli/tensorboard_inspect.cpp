#include "apps/cli/tensorboard_inspect.hpp"

#include <boost/json.hpp>
#include <iomanip>
#include <map>
#include <ostream>
#include <stdexcept>
#include <vector>

#include "apps/cli/json_values.hpp"
#include "core/model/python_json.hpp"
#include "engine/graph/job.hpp"
#include "stages/tensorboard/logdir_reader.hpp"

namespace rulestream::cli {
namespace {

// What inspect reports of a tag (copied: the run's reader, which owns its tags, is gone by the
// time the report is printed).
struct TagSummary {
  std::string name;
  TagKind kind = TagKind::Other;
  std::uint64_t count = 0;
  std::int64_t first_step = 0;
  std::int64_t last_step = 0;
};

struct Point {
  std::int64_t step = 0;
  double wall_time = 0.0;
  SummaryReading reading;
};

// Counts every tag's values, and keeps the values of the one tag asked for (if any).
class InspectSink final : public TensorBoardValueSink {
 public:
  explicit InspectSink(const TensorBoardInspectRequest& request) : request_(request) {}

  void on_value(const TensorBoardTag& tag, std::int64_t step, double wall_time,
                const SummaryReading& reading) override {
    auto& tags = runs_[tag.run];
    if (tags.size() <= tag.index) tags.resize(tag.index + 1);
    TagSummary& summary = tags[tag.index];
    if (summary.count == 0) {
      summary.name = tag.name;
      summary.kind = tag.kind;
      summary.first_step = step;
    }
    ++summary.count;
    summary.last_step = step;
    if (request_.tag && *request_.tag == tag.name && (!request_.run || *request_.run == tag.run)) {
      points_[tag.run].push_back({step, wall_time, reading});
    }
  }

  // Tags of a run in order of first appearance; none for a run without values.
  const std::vector<TagSummary>& tags_of(const std::string& run) const {
    static const std::vector<TagSummary> kNone;
    const auto found = runs_.find(run);
    return found == runs_.end() ? kNone : found->second;
  }
  const std::map<std::string, std::vector<Point>>& points() const { return points_; }

 private:
  const TensorBoardInspectRequest& request_;
  std::map<std::string, std::vector<TagSummary>> runs_;
  std::map<std::string, std::vector<Point>> points_;
};

boost::json::object point_json(const Point& point) {
  boost::json::object entry;
  entry["step"] = point.step;
  entry["wall_time"] = json_number(point.wall_time);
  if (point.reading.kind == TagKind::Scalar) {
    entry["value"] = json_number(point.reading.scalar);
  } else if (point.reading.kind == TagKind::Histogram) {
    const HistogramFigures& histogram = point.reading.histogram;
    entry["min"] = json_number(histogram.min);
    entry["max"] = json_number(histogram.max);
    entry["num"] = json_number(histogram.num);
    entry["sum"] = json_number(histogram.sum);
    if (histogram.sum_squares) entry["sum_squares"] = json_number(*histogram.sum_squares);
    entry["mean"] = json_number(histogram.mean());
  }
  return entry;
}

boost::json::object summary_json(const Storage& storage, TrialFormat format, const LogdirRead& read,
                                 const InspectSink& sink) {
  boost::json::object runs;
  for (const std::string& run : read.runs) {
    boost::json::object tags;
    for (const TagSummary& summary : sink.tags_of(run)) {
      boost::json::object entry;
      entry["kind"] = std::string(tag_kind_name(summary.kind));
      entry["count"] = summary.count;
      entry["first_step"] = summary.first_step;
      entry["last_step"] = summary.last_step;
      tags[summary.name] = std::move(entry);
    }
    boost::json::object entry;
    entry["tags"] = std::move(tags);
    runs[run] = std::move(entry);
  }
  boost::json::array problems;
  for (const auto& problem : read.problems)
    problems.push_back(boost::json::string(problem.message));
  boost::json::object document;
  document["format"] = std::string(trial_format_name(format));
  document["path"] = storage.describe();
  document["runs"] = std::move(runs);
  document["problems"] = std::move(problems);
  return document;
}

void print_summary(const Storage& storage, TrialFormat format, const LogdirRead& read,
                   const InspectSink& sink, std::ostream& out) {
  if (format == TrialFormat::TextMetrics) {
    out << "folder     " << storage.describe() << " (text metrics)\n";
  } else {
    out << "logdir     " << storage.describe() << " (TensorBoard)\n";
  }
  out << "runs       " << read.runs.size() << ", " << read.files << " "
      << series_format_of(format).file_noun << ", " << read.bytes << " bytes\n";
  for (const std::string& run : read.runs) {
    const auto& tags = sink.tags_of(run);
    out << "run " << run << ": " << tags.size() << " tags\n";
    for (const TagSummary& summary : tags) {
      out << "  " << std::left << std::setw(10) << tag_kind_name(summary.kind) << " "
          << std::setw(40) << summary.name << " " << summary.count << " values, steps "
          << summary.first_step << ".." << summary.last_step << "\n";
    }
  }
  for (const auto& problem : read.problems) out << "problem    " << problem.message << "\n";
}

// The run the request names, or the one run holding its tag; std::invalid_argument otherwise.
std::string chosen_run(const TensorBoardInspectRequest& request, const LogdirRead& read,
                       const InspectSink& sink) {
  const std::string& tag = *request.tag;
  std::vector<std::string> holding;
  for (const std::string& run : read.runs) {
    for (const TagSummary& summary : sink.tags_of(run)) {
      if (summary.name == tag) holding.push_back(run);
    }
  }
  if (request.run) {
    for (const auto& run : holding) {
      if (run == *request.run) return run;
    }
    throw std::invalid_argument("no tag '" + tag + "' in run '" + *request.run + "'");
  }
  if (holding.size() == 1) return holding.front();
  if (holding.empty()) throw std::invalid_argument("no tag '" + tag + "' in any run");
  std::string runs;
  for (const auto& run : holding) runs += (runs.empty() ? "" : ", ") + ("'" + run + "'");
  throw std::invalid_argument("tag '" + tag + "' is in " + std::to_string(holding.size()) +
                              " runs (" + runs + "): name one with --run");
}

void print_points(const std::string& run, const std::vector<Point>& points,
                  const TensorBoardInspectRequest& request, std::ostream& out) {
  if (request.json) {
    boost::json::array entries;
    for (const Point& point : points) entries.push_back(point_json(point));
    boost::json::object document;
    document["run"] = run;
    document["tag"] = *request.tag;
    document["points"] = std::move(entries);
    out << dump_python_json(document, InvalidUtf8::SurrogateEscape) << "\n";
    return;
  }
  out << "run " << run << ", tag " << *request.tag << ": " << points.size() << " values\n";
  out << std::left << std::setw(10) << "step" << std::setw(20) << "wall_time"
      << "value\n";
  for (const Point& point : points) {
    out << std::left << std::setw(10) << point.step << std::setw(20) << std::fixed
        << std::setprecision(3) << point.wall_time << std::defaultfloat << std::setprecision(9);
    if (point.reading.kind == TagKind::Scalar) {
      out << point.reading.scalar;
    } else if (point.reading.kind == TagKind::Histogram) {
      const HistogramFigures& histogram = point.reading.histogram;
      out << "histogram of " << histogram.num << ": min " << histogram.min << ", max "
          << histogram.max << ", mean " << histogram.mean();
    } else {
      out << tag_kind_name(point.reading.kind);
    }
    out << "\n";
  }
}

}  // namespace

void inspect_series(const Storage& storage, TrialFormat format,
                    const TensorBoardInspectRequest& request, std::ostream& out) {
  if (request.run && !request.tag) throw std::invalid_argument("--run needs --tag");
  InspectSink sink(request);
  const LogdirRead read = read_logdir(storage, sink, {}, series_format_of(format));
  if (!request.tag) {
    if (request.json) {
      out << dump_python_json(summary_json(storage, format, read, sink),
                              InvalidUtf8::SurrogateEscape)
          << "\n";
    } else {
      print_summary(storage, format, read, sink, out);
    }
    return;
  }
  const std::string run = chosen_run(request, read, sink);
  const auto found = sink.points().find(run);
  print_points(run, found == sink.points().end() ? std::vector<Point>{} : found->second, request,
               out);
}

}  // namespace rulestream::cli
