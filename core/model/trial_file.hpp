#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rulestream {

// A file of a trial that a source found ready to read. Event files are not announced: an
// index file is written after its event file (smdebug's order), so the index is the signal
// that a (step, worker) has landed.
// A file a source announces (sources/common/trial_source.hpp), by a format's file filter
// (file_filter.hpp): an smdebug trial's index, collections and end-marker files, once each; a
// TensorBoard event file each time it has grown, `size` then saying how much of it there is.
struct TrialFile {
  // EventFile: a TensorBoard event file; MetricsFile: a text metrics file (file_filter.hpp).
  enum class Kind { Index, Collections, EndMarker, EventFile, MetricsFile };
  Kind kind = Kind::Index;
  std::string path;  // relative to the trial root, '/'-separated
  std::uint64_t size = 0;
  std::int64_t modified_ns = 0;
  std::uint64_t identity = 0;  // as StoredObject::identity: a local file's inode, else 0

  friend bool operator==(const TrialFile&, const TrialFile&) = default;
};

// The kind of a relative path, or nullopt for files sources ignore (event files, *.tmp,
// claim.smd, anything unknown).
std::optional<TrialFile::Kind> trial_file_kind(std::string_view path);

// The arrival time a listing gives a file: its modification time (nanoseconds since the epoch,
// as StoredObject and TrialFile carry it); nullopt for 0, which storage uses for "unknown".
std::optional<std::chrono::system_clock::time_point> arrival_from_modified_ns(
    std::int64_t modified_ns);

}  // namespace rulestream
