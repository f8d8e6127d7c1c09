#include "stages/tensorboard/logdir_runs.hpp"

#include <algorithm>
#include <map>

namespace rulestream {
namespace {

std::string_view basename_of(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool all_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// smdebug's own event files: events/<step, 12 digits>/<step>_<worker>.tfevents. Their names
// contain "tfevents" too, but they belong to a trial (one further up, or beside), not a run.
bool is_smdebug_event_file(std::string_view path) {
  const std::string_view name = basename_of(path);
  const auto underscore = name.find('_');
  if (!name.ends_with(".tfevents") || underscore == std::string_view::npos ||
      !all_digits(name.substr(0, underscore))) {
    return false;
  }
  const std::string_view folder = path.substr(0, path.size() - name.size());
  if (folder.size() < 2) return false;
  const std::string_view step_folder = basename_of(folder.substr(0, folder.size() - 1));
  const std::string_view above = folder.substr(0, folder.size() - 1 - step_folder.size());
  return all_digits(step_folder) && (above == "events/" || above.ends_with("/events/"));
}

}  // namespace

bool is_event_file(std::string_view path) {
  return basename_of(path).find("tfevents") != std::string_view::npos &&
         !is_smdebug_event_file(path);
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

}  // namespace rulestream
