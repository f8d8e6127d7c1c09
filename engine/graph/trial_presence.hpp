#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/model/storage.hpp"

namespace rulestream {

// Whether the trial's root holds any trial file: the end marker, or files under collections/,
// index/ or events/ (in that order, so that an archived job answers without listing index/).
bool holds_trial_files(const Storage& storage);

// What an error or a waiting message says when there is no trial file: a folder "is not an
// smdebug trial"; an S3 prefix names its bucket and prefix, as S3's 404 would.
std::string no_trial_files(const Storage& storage);

// For replay and inspect, which would otherwise evaluate nothing and pass: throws StorageError,
// one line naming the folder (or the bucket and prefix), when the root is missing or holds no
// trial file.
void require_trial_files(const Storage& storage);

// What a path holds: an smdebug trial (any trial file, as holds_trial_files), else a
// TensorBoard logdir (a file whose basename contains "tfevents", at any depth), else a folder
// of text metrics (trainer_state.json, *.csv, JSON lines: is_text_metrics_file, at any depth).
// A folder with event files and text logs both (Lightning with two loggers) is a logdir: the
// same values are not judged twice.
enum class TrialFormat { Smdebug, TensorBoard, TextMetrics };

// "smdebug", "tensorboard", "metrics": how metrics, the service's API and messages name it.
std::string_view trial_format_name(TrialFormat format);

// What the root holds now, nullopt while it holds neither kind of file (a job that has not
// written yet, or a folder that is no job). Storage errors propagate (StorageError).
std::optional<TrialFormat> detect_format(const Storage& storage);

// For commands that read either: the format, or StorageError (one line naming the folder, or
// the bucket and prefix) when the root is missing or holds neither.
TrialFormat require_known_format(const Storage& storage);

}  // namespace rulestream
