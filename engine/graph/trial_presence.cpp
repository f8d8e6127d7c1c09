#include "engine/graph/trial_presence.hpp"

#include "core/model/exceptions.hpp"
#include "core/model/file_filter.hpp"
#include "core/model/trial_layout.hpp"
#include "sources/s3/s3_storage.hpp"
#include "stages/tensorboard/logdir_runs.hpp"

namespace rulestream {

bool holds_trial_files(const Storage& storage) {
  return storage.exists(kEndOfJobMarker) || !storage.list(kCollectionsDir).empty() ||
         !storage.list(kIndexDir).empty() || !storage.list(kEventsDir).empty();
}

std::string no_trial_files(const Storage& storage) {
  if (const auto* s3 = dynamic_cast<const S3Storage*>(&storage)) {
    const S3TrialLocation& location = s3->location();
    const std::string where =
        location.prefix.empty()
            ? "at the top of bucket '" + location.bucket + "'"
            : "under prefix '" + location.prefix + "' of bucket '" + location.bucket + "'";
    return "no smdebug trial " + where +
           " (no collections/, index/ or events/ objects, no end marker: an empty or wrong "
           "prefix)";
  }
  return "not an smdebug trial (no collections/, index/ or events/ files)";
}

void require_trial_files(const Storage& storage) {
  if (!storage.root_exists()) throw StorageError(storage.describe() + ": no such trial folder");
  if (!holds_trial_files(storage)) {
    throw StorageError(storage.describe() + ": " + no_trial_files(storage));
  }
}

std::optional<TrialFormat> detect_format(const Storage& storage) {
  if (holds_trial_files(storage)) return TrialFormat::Smdebug;
  bool metrics = false;
  for (const auto& object : storage.list("")) {
    if (is_event_file(object.path)) return TrialFormat::TensorBoard;
    metrics = metrics || is_text_metrics_file(object.path);
  }
  if (metrics) return TrialFormat::TextMetrics;
  return std::nullopt;
}

std::string_view trial_format_name(TrialFormat format) {
  switch (format) {
    case TrialFormat::Smdebug:
      return "smdebug";
    case TrialFormat::TensorBoard:
      return "tensorboard";
    case TrialFormat::TextMetrics:
      return "metrics";
  }
  return "smdebug";
}

TrialFormat require_known_format(const Storage& storage) {
  if (!storage.root_exists()) throw StorageError(storage.describe() + ": no such trial folder");
  if (const auto format = detect_format(storage)) return *format;
  throw StorageError(storage.describe() + ": " + no_trial_files(storage) +
                     ", nor a TensorBoard logdir (no file named *tfevents*), nor a folder of "
                     "text metrics (no trainer_state.json, *.csv or JSON lines)");
}

}  // namespace rulestream
