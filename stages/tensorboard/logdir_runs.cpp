#include "stages/tensorboard/logdir_runs.hpp"

#include <algorithm>
#include <map>

#include "core/model/file_filter.hpp"
#include "stages/tensorboard/run_reader.hpp"

namespace rulestream {

bool is_event_file(std::string_view path) {
  return is_tensorboard_event_file(path);
}

std::string run_of(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string(".") : std::string(path.substr(0, slash));
}

std::vector<RunFiles> group_runs(std::span<const StoredObject> listing) {
  std::map<std::string, std::vector<StoredObject>> runs;
  for (const auto& object : listing) {
    if (is_event_file(object.path)) runs[run_of(object.path)].push_back(object);
  }
  std::vector<RunFiles> grouped;
  grouped.reserve(runs.size());
  for (auto& [run, files] : runs) {
    // One folder: ordering by path is ordering by basename, byte by byte.
    std::sort(files.begin(), files.end(),
              [](const StoredObject& a, const StoredObject& b) { return a.path < b.path; });
    grouped.push_back({run, std::move(files)});
  }
  return grouped;
}

const SeriesFormat& tensorboard_series_format() {
  static const SeriesFormat format{
      .job_noun = "logdir",
      .job_name = "TensorBoard logdir",
      .file_noun = "event files",
      .format_label = "TensorBoard",
      .filter = FileFilter::tensorboard_logdir(),
      .run_of = [](std::string_view path) { return run_of(path); },
      .group_runs = [](std::span<const StoredObject> listing) { return group_runs(listing); },
      .make_loader = [](std::string run) -> std::unique_ptr<RunLoader> {
        return std::make_unique<RunReader>(std::move(run));
      }};
  return format;
}

}  // namespace rulestream
