#include "sources/common/file_announcer.hpp"

#include <algorithm>

namespace rulestream {

void FileAnnouncer::announce(std::vector<TrialFile> files) {
  if (files.empty()) return;
  std::sort(files.begin(), files.end(),
            [](const TrialFile& a, const TrialFile& b) { return a.path < b.path; });
  std::lock_guard lock(mutex_);
  if (closed_) return;
  announced_ += files.size();
  callback_(std::move(files));
}

void FileAnnouncer::close(bool wait_for_callback) {
  if (!wait_for_callback) {
    closed_ = true;
    return;
  }
  std::lock_guard lock(mutex_);
  closed_ = true;
}

}  // namespace rulestream
