#include "stages/metrics/metrics_runs.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <map>
#include <optional>

#include "core/model/file_filter.hpp"
#include "stages/metrics/metrics_run_loader.hpp"

namespace rulestream {
namespace {

constexpr std::string_view kTrainerState = "trainer_state.json";
constexpr std::string_view kCheckpoint = "checkpoint-";

// N of a path ".../checkpoint-N/trainer_state.json"; nullopt for any other path.
std::optional<std::uint64_t> checkpoint_number(std::string_view path) {
  if (!path.ends_with(kTrainerState)) return std::nullopt;
  std::string_view folder = path.substr(0, path.size() - kTrainerState.size());
  if (!folder.ends_with('/')) return std::nullopt;
  folder.remove_suffix(1);
  const auto slash = folder.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? folder : folder.substr(slash + 1);
  if (!name.starts_with(kCheckpoint) || name.size() == kCheckpoint.size()) return std::nullopt;
  const std::string_view digits = name.substr(kCheckpoint.size());
  std::uint64_t number = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return number;
}

}  // namespace

std::string metrics_run_of(std::string_view path) {
  if (!checkpoint_number(path)) return std::string(path);
  std::string_view folder = path.substr(0, path.size() - kTrainerState.size() - 1);
  const auto slash = folder.rfind('/');
  const std::string_view parent =
      slash == std::string_view::npos ? std::string_view() : folder.substr(0, slash + 1);
  return std::string(parent) + std::string(kTrainerState);
}

std::vector<RunFiles> group_metrics_runs(std::span<const StoredObject> listing) {
  std::map<std::string, std::vector<StoredObject>> by_run;
  for (const StoredObject& object : listing) {
    if (is_text_metrics_file(object.path)) by_run[metrics_run_of(object.path)].push_back(object);
  }
  std::vector<RunFiles> runs;
  for (auto& [run, files] : by_run) {
    if (files.size() > 1) {
      // trainer_state.json: the newest checkpoint's, then the one beside the checkpoints.
      const auto newest = std::max_element(
          files.begin(), files.end(), [](const StoredObject& a, const StoredObject& b) {
            return checkpoint_number(a.path).value_or(0) < checkpoint_number(b.path).value_or(0);
          });
      std::vector<StoredObject> read;
      if (checkpoint_number(newest->path)) read.push_back(*newest);
      for (const StoredObject& file : files) {
        if (!checkpoint_number(file.path)) read.push_back(file);
      }
      files = std::move(read);
    }
    runs.push_back({run, std::move(files)});
  }
  return runs;
}

const SeriesFormat& text_metrics_series_format() {
  static const SeriesFormat format{
      .job_noun = "metrics folder",
      .job_name = "folder of text metrics",
      .file_noun = "metrics files",
      .format_label = "text metrics",
      .filter = FileFilter::text_metrics(),
      .run_of = metrics_run_of,
      .group_runs = group_metrics_runs,
      .make_loader = [](std::string run) -> std::unique_ptr<RunLoader> {
        return std::make_unique<MetricsRunLoader>(std::move(run));
      }};
  return format;
}

}  // namespace rulestream
