#include "sources/common/readiness_tracker.hpp"

namespace rulestream {

void ReadinessTracker::created(const std::string& path) {
  if (announced(path)) return;
  // A file created again restarts its observations.
  settling_.insert_or_assign(path, Settling{});
}

bool ReadinessTracker::finished(const std::string& path) {
  if (announced(path)) return false;
  return announce(path);
}

bool ReadinessTracker::scanned(const std::string& path, TrialFile::Kind kind, Observation seen,
                               Clock::time_point now) {
  if (announced(path)) return false;
  if (!live_) return announce(path);
  const auto settling = settling_.find(path);
  if (settling == settling_.end()) {
    if (kind == TrialFile::Kind::EndMarker || seen.size > 0) return announce(path);
    // Empty: about to be written in place, or left empty; later scans tell.
    settling_.emplace(path, Settling{seen, now});
    return false;
  }
  if (settling->second.seen != seen) {
    settling->second = Settling{seen, now};
    return false;
  }
  if (now - settling->second.since < settle_) return false;
  return announce(path);
}

bool ReadinessTracker::announce(const std::string& path) {
  settling_.erase(path);
  announced_.insert(path);
  return true;
}

}  // namespace rulestream
