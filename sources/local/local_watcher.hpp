#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/model/file_filter.hpp"
#include "core/model/trial_file.hpp"
#include "sources/common/trial_source.hpp"

namespace rulestream {

class InotifyHub;

// Finds the files of a local job that its format's file filter names (Options::filter;
// core/model/file_filter.hpp): an initial scan, then (when following) inotify through
// Boost.Asio for new folders, new files and files renamed into place.
//
// For a filter whose files grow in place (a TensorBoard logdir), every folder is followed and a
// file is announced when a scan finds it holding something, and again whenever inotify says it
// was written to (IN_MODIFY, IN_CLOSE_WRITE, IN_MOVED_TO) or a rescan finds its size changed;
// the announcement carries the size seen. The events of one delivery announce a file once.
//
// For an smdebug trial (the default filter), each file is announced once, when it is complete:
// found by the scan, closed after writing (IN_CLOSE_WRITE) or renamed into place
// (IN_MOVED_TO). Files may appear in any order.
// ReadinessTracker (sources/common/readiness_tracker.hpp) states the exact rules; in short, a file
// rewritten in place after it was announced is not announced again, and a scan of a live
// trial holds back empty files (except the end marker) and files it saw created but not closed
// until they are closed or hold still from one rescan to the next.
//
// Only the root (for the end marker), index/ and collections/ are scanned and watched, with
// every folder below them; events/ is not (an index file is the signal that a step landed).
// (The smdebug filter's follows_folder.)
// Symbolic links to folders below the root are not followed.
//
// Runs on the io_context's thread; `on_files` is called there, with the files found together
// in path order. A file closed or renamed into place before the end marker was written is
// announced before it or in the same batch (where path order puts the end marker last). A periodic
// rescan (rescan_interval) is the safety net for what inotify can miss (queue overflow, a folder
// created and filled before its watch was added). When inotify is not available (no more instances
// or watches: ENOSPC, EMFILE), the watcher says so in one line on stderr and follows by rescanning
// alone. Inotify is an instance of the watcher's own, or an InotifyHub shared with other watchers
// (Options::inotify_hub): the guarantees above hold the same with either.
//
// Limit: a file written in place (not renamed) that a scan finds non-empty before inotify
// reported its creation (a folder's first scan, or no inotify at all) is taken as complete.
// smdebug renames every file into place, so its files are never caught half-written.
//
// The io_context must outlive the watcher.
class LocalWatcher final : public TrialSource {
 public:
  struct Options {
    bool follow = true;  // false: the initial scan only (replay)
    std::chrono::milliseconds rescan_interval{2000};
    // While inotify works, rescans come this often instead (unset: rescan_interval).
    std::optional<std::chrono::milliseconds> rescan_while_watching;
    FileFilter filter = FileFilter::smdebug_trial();
    // Follow through this shared inotify instance (serve: one for every job) instead of one of
    // the watcher's own. Its executor may be another io_context's: events reach the watcher
    // posted to its own strand either way.
    std::shared_ptr<InotifyHub> inotify_hub;
  };
  using Callback = TrialSource::Callback;

  // Throws StorageError naming the root when it is not a readable folder.
  LocalWatcher(boost::asio::io_context& io, std::filesystem::path root, Options options,
               Callback on_files);
  ~LocalWatcher() override;  // stop()s
  LocalWatcher(const LocalWatcher&) = delete;
  LocalWatcher& operator=(const LocalWatcher&) = delete;

  // Scans and announces what exists, then follows (when options.follow). Call once.
  void start() override;
  // Stops following; no callback runs after stop() returns. Safe from any thread: from another
  // thread it waits for a callback in progress to return.
  void stop() override;

  // Files announced so far (for progress reporting and tests).
  std::size_t files_announced() const override;

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace rulestream
