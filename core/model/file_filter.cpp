#include "core/model/file_filter.hpp"

#include <algorithm>

#include "core/model/trial_layout.hpp"

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

// The index and collections trees; events/ is left out on purpose (an index file is the signal
// that a step landed).
bool follows_trial_folder(std::string_view path) {
  const std::string_view index = kIndexDir.substr(0, kIndexDir.size() - 1);
  const std::string_view collections = kCollectionsDir.substr(0, kCollectionsDir.size() - 1);
  return path == index || path == collections || path.starts_with(kIndexDir) ||
         path.starts_with(kCollectionsDir);
}

// Every folder may be a run.
bool follows_every_folder(std::string_view) {
  return true;
}

std::optional<TrialFile::Kind> event_file_kind(std::string_view path) {
  if (!is_tensorboard_event_file(path)) return std::nullopt;
  return TrialFile::Kind::EventFile;
}

std::optional<TrialFile::Kind> metrics_file_kind(std::string_view path) {
  if (!is_text_metrics_file(path)) return std::nullopt;
  return TrialFile::Kind::MetricsFile;
}

}  // namespace

std::optional<TextMetricsKind> text_metrics_kind(std::string_view path) {
  const std::string_view name = basename_of(path);
  if (name == "trainer_state.json") return TextMetricsKind::TrainerState;
  if (name.size() > 4 && name.ends_with(".csv")) return TextMetricsKind::Csv;
  if ((name.size() > 6 && name.ends_with(".jsonl")) || name == "scalars.json" ||
      (name.size() > 9 && name.ends_with(".log.json"))) {
    return TextMetricsKind::JsonLines;
  }
  return std::nullopt;
}

bool is_tensorboard_event_file(std::string_view path) {
  return basename_of(path).find("tfevents") != std::string_view::npos &&
         !is_smdebug_event_file(path);
}

FileFilter FileFilter::smdebug_trial() {
  return {.kind_of = trial_file_kind,
          .follows_folder = follows_trial_folder,
          .announces_growth = false};
}

FileFilter FileFilter::tensorboard_logdir() {
  return {
      .kind_of = event_file_kind, .follows_folder = follows_every_folder, .announces_growth = true};
}

FileFilter FileFilter::text_metrics() {
  return {.kind_of = metrics_file_kind,
          .follows_folder = follows_every_folder,
          .announces_growth = true};
}

}  // namespace rulestream
