#include "engine/graph/file_tracker.hpp"

#include <algorithm>

#include "core/model/trial_layout.hpp"

namespace rulestream {

bool FileTracker::first_sight(const TrialFile& file,
                              std::optional<std::chrono::system_clock::time_point> seen_at) {
  std::lock_guard lock(mutex_);
  if (!seen_files_.insert(file.path).second) return false;
  if (file.kind == TrialFile::Kind::Index) {
    if (seen_at) seen_at_.emplace(file.path, *seen_at);
    if (const auto name = parse_step_file_name(file.path)) in_flight_.insert(name->step);
  } else if (file.kind == TrialFile::Kind::Collections) {
    // Rules select tensors by collection: no step goes out before the collections are in.
    in_flight_.insert(kCollectionsInFlight);
  }
  return true;
}

void FileTracker::landed_or_dropped(std::int64_t step) {
  std::lock_guard lock(mutex_);
  if (const auto it = in_flight_.find(step); it != in_flight_.end()) in_flight_.erase(it);
}

std::optional<std::chrono::system_clock::time_point> FileTracker::arrival_of(
    const TrialFile& file) {
  {
    std::lock_guard lock(mutex_);
    if (const auto it = seen_at_.find(file.path); it != seen_at_.end()) {
      const auto seen = it->second;
      seen_at_.erase(it);
      return seen;
    }
  }
  return arrival_from_modified_ns(file.modified_ns);
}

std::optional<std::int64_t> FileTracker::lowest_in_flight() const {
  std::lock_guard lock(mutex_);
  if (in_flight_.empty()) return std::nullopt;
  return *in_flight_.begin();
}

bool FileTracker::skipped_after_stop(std::int64_t step, bool stopping) {
  std::lock_guard lock(mutex_);
  if (!stopping) {
    highest_step_begun_ = std::max(highest_step_begun_, step);
    return false;
  }
  if (!stop_after_step_) stop_after_step_ = highest_step_begun_;
  if (step <= *stop_after_step_) return false;
  index_files_unread_++;
  return true;
}

bool FileTracker::interrupted() const {
  std::lock_guard lock(mutex_);
  return stop_after_step_.has_value();
}

std::int64_t FileTracker::index_files_unread() const {
  std::lock_guard lock(mutex_);
  return index_files_unread_;
}

}  // namespace rulestream
