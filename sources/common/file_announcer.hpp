#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <vector>

#include "sources/common/trial_source.hpp"

namespace rulestream {

// Hands the files a source found to its callback, in path order, and never after close(): what
// LocalWatcher and S3Watcher share between finding files and announcing them.
class FileAnnouncer {
 public:
  explicit FileAnnouncer(TrialSource::Callback callback) : callback_(std::move(callback)) {}

  // Sorts by path and calls the callback (nothing for an empty batch, nothing once closed).
  void announce(std::vector<TrialFile> files);

  // No callback starts after this returns. From another thread than the callback's, it waits
  // for a callback in progress (`wait_for_callback`); from the callback's own thread (a stop()
  // from within a callback, or on the source's strand) it must not, or it would wait for itself.
  void close(bool wait_for_callback);
  bool closed() const { return closed_.load(); }

  std::size_t announced() const { return announced_.load(); }

 private:
  const TrialSource::Callback callback_;
  std::mutex mutex_;  // held while the callback runs
  std::atomic<bool> closed_{false};
  std::atomic<std::size_t> announced_{0};
};

}  // namespace rulestream
