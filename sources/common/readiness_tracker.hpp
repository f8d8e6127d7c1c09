#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/model/trial_file.hpp"

namespace rulestream {

// Decides when a trial file is complete enough to announce, from what a watcher saw of it, and
// remembers what was announced so that nothing is announced twice. No I/O: the watcher stats
// files and reports events; this holds the rules.
//
// The rules, for a live trial (one still being written):
// - closed after writing (IN_CLOSE_WRITE) or renamed into place (IN_MOVED_TO): ready, whatever
//   the size (a closed empty index file is broken, and the consumer reports it);
// - found by a scan: ready at once, unless it is empty (the end marker is empty by design) or
//   was seen created under its final name and not closed yet, i.e. it is being written in
//   place. Such a file is ready once scans found it with the same size and modification time
//   for at least `settle` (a watcher's rescans are that far apart): its writer stalled, or its
//   close event was lost (queue overflow, or no inotify at all), and a rescan must neither
//   announce it half-written nor wait for it forever. Scans closer together than that (a
//   folder's first listing right after the initial scan) do not settle a file: a writer that
//   has created it but not written yet would be announced empty.
// For an archived trial (replay) nothing is being written: every file a scan finds is ready,
// empty ones included, so that the consumer reports them instead of them vanishing silently.
//
// Once announced, a file stays announced: a file rewritten in place later is not announced
// again (smdebug never rewrites a file).
class ReadinessTracker {
 public:
  struct Observation {
    std::uint64_t size = 0;
    std::int64_t modified_ns = 0;
    friend bool operator==(const Observation&, const Observation&) = default;
  };

  using Clock = std::chrono::steady_clock;

  // `settle`: how long a file that must hold still must be seen unchanged (0: two scans).
  explicit ReadinessTracker(bool live, Clock::duration settle = Clock::duration::zero())
      : live_(live), settle_(settle) {}

  bool announced(const std::string& path) const { return announced_.contains(path); }
  std::size_t announced_count() const { return announced_.size(); }

  // Seen created under its final name (IN_CREATE): it is being written in place.
  void created(const std::string& path);
  // Closed after writing, or renamed into place. True: announce it now.
  bool finished(const std::string& path);
  // Found by a scan at `now`. True: announce it now.
  bool scanned(const std::string& path, TrialFile::Kind kind, Observation seen,
               Clock::time_point now = {});

 private:
  bool announce(const std::string& path);

  // A file that must hold still: what scans saw of it (nullopt: not scanned yet), and since when.
  struct Settling {
    std::optional<Observation> seen;
    Clock::time_point since;
  };

  bool live_;
  Clock::duration settle_;
  std::unordered_set<std::string> announced_;
  // Files that must hold still (being written in place, or empty).
  std::unordered_map<std::string, Settling> settling_;
};

}  // namespace rulestream
