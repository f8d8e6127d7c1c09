#include "core/model/trial_file.hpp"

#include "core/model/trial_layout.hpp"

namespace rulestream {

// The same files smdebug's reader (and TrialStore) take: index files by their step file name,
// collection files by smdebug's collections regex, the end marker at the root only. Files still
// being written carry ".tmp" and are never a kind, whatever the rest of their name says.
std::optional<TrialFile::Kind> trial_file_kind(std::string_view path) {
  if (path.ends_with(".tmp")) return std::nullopt;
  if (path == kEndOfJobMarker) return TrialFile::Kind::EndMarker;
  if (path.starts_with(kIndexDir)) {
    const bool index_extension = path.ends_with(".json") || path.ends_with(".csv");
    if (index_extension && parse_step_file_name(path)) return TrialFile::Kind::Index;
    return std::nullopt;
  }
  if (path.starts_with(kCollectionsDir) && parse_collections_worker(path)) {
    return TrialFile::Kind::Collections;
  }
  return std::nullopt;
}

std::optional<std::chrono::system_clock::time_point> arrival_from_modified_ns(
    std::int64_t modified_ns) {
  if (modified_ns == 0) return std::nullopt;
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::nanoseconds(modified_ns)));
}

}  // namespace rulestream
