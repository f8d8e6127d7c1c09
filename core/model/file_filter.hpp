#pragma once

// A format's file filter: which files under a job's root a source announces, which folders it
// follows to find them, and whether a file is announced once or each time it grows. The one
// thing a source knows of a format (DESIGN: a format is a loader stage and a file filter).
//
// - An smdebug trial: index files, collections files and the end marker (trial_file_kind), in
//   index/ and collections/ and the root; each once, when complete (smdebug renames every file
//   into place). Its event files are found through the index files, not announced.
// - A TensorBoard logdir: event files (is_tensorboard_event_file) in every folder, each
//   announced when found and again whenever it has grown, since writers append records in place.
// - A folder of text metrics: metrics files (is_text_metrics_file) in every folder, announced as
//   event files are: CSV and JSON-lines logs grow by rows, trainer_state.json is rewritten.

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/model/trial_file.hpp"

namespace rulestream {

struct FileFilter {
  // The kind of a file (its path relative to the root, '/'-separated) the source announces;
  // nullopt: the file is ignored.
  std::optional<TrialFile::Kind> (*kind_of)(std::string_view path) = nullptr;
  // Whether a folder below the root (relative, without its trailing '/') is scanned and
  // followed.
  bool (*follows_folder)(std::string_view folder) = nullptr;
  // True: a file is announced when found and again each time its size has changed (its size
  // then says how much of it there is). False: once, when it is complete.
  bool announces_growth = false;

  static FileFilter smdebug_trial();
  static FileFilter tensorboard_logdir();
  static FileFilter text_metrics();
};

// Whether `path`'s basename contains "tfevents" (TensorBoard's own rule for event files), and
// it is not one of smdebug's own event files (events/<12 digits>/<12 digits>_<worker>.tfevents),
// which belong to a trial.
bool is_tensorboard_event_file(std::string_view path);

// What a text metrics file is, by its name: Hugging Face's trainer_state.json, a CSV log (*.csv:
// Lightning's metrics.csv, Ultralytics' results.csv, stable-baselines3's progress.csv, Keras'
// CSVLogger), JSON lines (*.jsonl, OpenMMLab's scalars.json and *.log.json).
enum class TextMetricsKind : std::uint8_t { TrainerState, Csv, JsonLines };
std::optional<TextMetricsKind> text_metrics_kind(std::string_view path);
inline bool is_text_metrics_file(std::string_view path) {
  return text_metrics_kind(path).has_value();
}

}  // namespace rulestream
