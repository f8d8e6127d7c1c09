#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/model/trial_file.hpp"

namespace rulestream {

// What the graph has been handed and what is still in flight: each file goes to the loader once;
// an index file's step counts as in flight until its landing has been assembled (or dropped),
// and every step is held while a collections file is read (rules select tensors by collection),
// so no later step overtakes one still being read. It also remembers when a live pipeline saw
// each index file (its step's arrival) and where a replay asked to stop stops.
// Thread-safe: sources, loader threads and the assembler call it; one mutex guards it all.
class FileTracker {
 public:
  // Stands for "the collections" among the steps in flight: lower than every step.
  static constexpr std::int64_t kCollectionsInFlight = -1;

  // Records a file the source announced; false when it was announced before (nothing changes).
  // `seen_at`: when a live pipeline saw it (nullopt: its modification time tells), kept for
  // index files until arrival_of asks.
  bool first_sight(const TrialFile& file,
                   std::optional<std::chrono::system_clock::time_point> seen_at);
  // The step's index file (or, with kCollectionsInFlight, a collections file) is in the store
  // or was dropped: it holds no later step any more.
  void landed_or_dropped(std::int64_t step);
  // When the index file arrived: when the pipeline saw it, else its modification time.
  std::optional<std::chrono::system_clock::time_point> arrival_of(const TrialFile& file);
  // The lowest step still in flight (kCollectionsInFlight while collections load): steps from
  // it on must wait.
  std::optional<std::int64_t> lowest_in_flight() const;

  // Whether an index file of `step` is left unread because a replay was asked to stop
  // (`stopping`): such a replay finishes the steps it has begun (so none goes out with only
  // some of its workers) and reads no later index file.
  bool skipped_after_stop(std::int64_t step, bool stopping);
  // A replay was asked to stop and left index files unread.
  bool interrupted() const;
  std::int64_t index_files_unread() const;

 private:
  mutable std::mutex mutex_;
  std::set<std::string> seen_files_;
  std::multiset<std::int64_t> in_flight_;
  std::unordered_map<std::string, std::chrono::system_clock::time_point> seen_at_;
  // The highest step whose index files began loading, and where a replay asked to stop stops.
  std::int64_t highest_step_begun_ = std::numeric_limits<std::int64_t>::min();
  std::optional<std::int64_t> stop_after_step_;
  std::int64_t index_files_unread_ = 0;
};

}  // namespace rulestream
