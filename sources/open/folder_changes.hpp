#pragma once

// Wakes a caller waiting for a local folder to change: a file or folder created, written,
// closed or moved in anywhere under it (inotify; subfolders are watched as they appear). For a
// watch that starts before its job writes: the job's first files are seen as they land, not at
// the next poll (which made a job's first events 1.5 s late where the rest took 1 ms).
//
// Not thread-safe: one caller waits.

#include <chrono>
#include <filesystem>
#include <map>
#include <string>

namespace rulestream {

class FolderChanges {
 public:
  // Watches `root` and every folder under it. Without inotify (none left to the user, a
  // filesystem that has none), wait() only sleeps: the caller's poll is then what it was.
  explicit FolderChanges(std::filesystem::path root);
  ~FolderChanges();
  FolderChanges(const FolderChanges&) = delete;
  FolderChanges& operator=(const FolderChanges&) = delete;

  // Whether the folder can be watched (else wait() sleeps out its timeout).
  bool watching() const { return fd_ >= 0; }
  // Blocks until something changed under the root since the previous call, or `timeout`
  // passed; true when something changed. New subfolders are watched before it returns.
  bool wait(std::chrono::milliseconds timeout);

 private:
  // Watches `folder` and, recursively, the folders already in it.
  void watch_tree(const std::filesystem::path& folder);

  std::filesystem::path root_;
  int fd_ = -1;
  std::map<int, std::filesystem::path> folders_;  // by watch descriptor
};

}  // namespace rulestream
