#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/model/file_filter.hpp"
#include "core/model/storage.hpp"
#include "core/model/trial_file.hpp"

namespace rulestream {

class InotifyHub;

// Finds the files of a job that its format's file filter names (file_filter.hpp) and announces
// each once, when it is complete, or, for a format whose files grow in place, each time it has
// grown: a local folder (LocalWatcher: a scan, then inotify) or an S3 prefix (S3Watcher:
// ListObjectsV2 polling, complete files only). Announcements run on the io_context's thread,
// files found together in one call, in path order.
class TrialSource {
 public:
  using Callback = std::function<void(std::vector<TrialFile>)>;

  virtual ~TrialSource() = default;
  // Finds and announces what exists, then follows (when following). Call once.
  virtual void start() = 0;
  // Stops following; no callback runs after stop() returns. Safe from any thread.
  virtual void stop() = 0;
  // Files announced so far (progress reporting, tests).
  virtual std::size_t files_announced() const = 0;
  // Why the latest look at the trial failed (a listing refused, a server down), while a live
  // source keeps trying; empty when it succeeded. A pipeline stopped then has not seen the job
  // as it is, and must not call it healthy. Safe from any thread.
  virtual std::string current_problem() const { return {}; }
};

struct TrialSourceOptions {
  bool follow = true;  // false: what exists now, once (replay)
  // How often a live source looks again: LocalWatcher's rescan safety net, S3Watcher's poll.
  std::chrono::milliseconds poll_interval{2000};
  // A local folder followed with inotify rescans this often instead, when set: what inotify
  // reports needs no rescan, and a rescan of a large tree costs (a logdir of 10,000 runs).
  // Without inotify, poll_interval stands.
  std::optional<std::chrono::milliseconds> rescan_while_watching;
  // Which files are announced, and how (an smdebug trial's by default).
  FileFilter filter = FileFilter::smdebug_trial();
  // A local trial: follow through this shared inotify instance (sources/local/inotify_hub.hpp)
  // rather than one of the watcher's own. Ignored for S3.
  std::shared_ptr<InotifyHub> inotify_hub;
};

}  // namespace rulestream
