#include "apps/cli/tensorboard_inspect.hpp"

#include <boost/json.hpp>
#include <deque>
#include <iomanip>
#include <ostream>
#include <stdexcept>
#include <vector>

#include "apps/cli/json_values.hpp"
#include "core/model/python_json.hpp"
#include "engine/graph/job.hpp"
#include "stages/series/series_store.hpp"

namespace rulestream::cli {
namespace {

// The store inspect reads into: every tag listed and counted, the values of the one tag asked
// for (if any) kept as the files hold them.
SeriesStoreOptions store_options(const TensorBoardInspectRequest& request) {
  SeriesStoreOptions options{.order = KeptOrder::AsWritten};
  options.keep_values = [&request](const std::string& run, const std::string& tag) {
    return request.tag && *request.tag == tag && (!request.run || *request.run == run);
  };
  return options;
}

// The tags of a run in order of first appearance; none for a run without values.
const std::deque<StoredSeries>& tags_of(const SeriesStore& store, const std::string& run) {
  static const std::deque<StoredSeries> kNone;
  const RunSeries* found = store.find_run(run);
  return found == nullptr ? kNone : found->tags();
}

boost::json::object point_json(const StoredReading& point) {
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

boost::json::object summary_json(const Storage& storage, TrialFormat format,
                                 const SeriesJobRead& read, const SeriesStore& store) {
  boost::json::object runs;
  for (const std::string& run : read.runs) {
    boost::json::object tags;
    for (const StoredSeries& summary : tags_of(store, run)) {
      boost::json::object entry;
      entry["kind"] = std::string(tag_kind_name(summary.kind));
      entry["count"] = summary.values_read;
      entry["first_step"] = summary.first_step;
      entry["last_step"] = summary.last_step;
      tags[summary.tag] = std::move(entry);
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

void print_summary(const Storage& storage, TrialFormat format, const SeriesJobRead& read,
                   const SeriesStore& store, std::ostream& out) {
  const SeriesFormat& series_format = series_format_of(format);
  // "logdir" or "folder", in the column's width.
  const std::string_view noun =
      series_format.job_noun.substr(series_format.job_noun.rfind(' ') + 1);
  out << std::left << std::setw(11) << noun << storage.describe() << " ("
      << series_format.format_label << ")\n";
  out << "runs       " << read.runs.size() << ", " << read.files << " " << series_format.file_noun
      << ", " << read.bytes << " bytes\n";
  for (const std::string& run : read.runs) {
    const auto& tags = tags_of(store, run);
    out << "run " << run << ": " << tags.size() << " tags\n";
    for (const StoredSeries& summary : tags) {
      out << "  " << std::left << std::setw(10) << tag_kind_name(summary.kind) << " "
          << std::setw(40) << summary.tag << " " << summary.values_read << " values, steps "
          << summary.first_step << ".." << summary.last_step << "\n";
    }
  }
  for (const auto& problem : read.problems) out << "problem    " << problem.message << "\n";
}

// The run the request names, or the one run holding its tag; std::invalid_argument otherwise.
std::string chosen_run(const TensorBoardInspectRequest& request, const SeriesJobRead& read,
                       const SeriesStore& store) {
  const std::string& tag = *request.tag;
  std::vector<std::string> holding;
  for (const std::string& run : read.runs) {
    if (store.find(run, tag) != nullptr) holding.push_back(run);
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

void print_points(const std::string& run, const std::vector<StoredReading>& points,
                  const TensorBoardInspectRequest& request, std::ostream& out) {
  if (request.json) {
    boost::json::array entries;
    for (const StoredReading& point : points) entries.push_back(point_json(point));
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
  for (const StoredReading& point : points) {
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
  SeriesStore store(store_options(request));
  const SeriesJobRead read = read_into_store(storage, store, {}, series_format_of(format));
  if (!request.tag) {
    if (request.json) {
      out << dump_python_json(summary_json(storage, format, read, store),
                              InvalidUtf8::SurrogateEscape)
          << "\n";
    } else {
      print_summary(storage, format, read, store, out);
    }
    return;
  }
  const std::string run = chosen_run(request, read, store);
  print_points(run, store.find(run, *request.tag)->as_written, request, out);
}

}  // namespace rulestream::cli
