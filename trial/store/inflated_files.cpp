#include "trial/store/inflated_files.hpp"

namespace rulestream {

std::optional<SharedBytes> InflatedFiles::find(FileId file, std::size_t needed) {
  std::lock_guard lock(mutex_);
  for (auto it = files_.begin(); it != files_.end(); ++it) {
    if (it->first != file) continue;
    if (it->second.size() < needed) return std::nullopt;
    files_.splice(files_.begin(), files_, it);
    return files_.front().second;
  }
  return std::nullopt;
}

void InflatedFiles::keep(FileId file, SharedBytes inflated) {
  std::lock_guard lock(mutex_);
  for (auto it = files_.begin(); it != files_.end(); ++it) {
    if (it->first == file) {
      bytes_ -= it->second.size();
      files_.erase(it);
      break;
    }
  }
  if (inflated.size() > budget_) return;
  bytes_ += inflated.size();
  files_.emplace_front(file, std::move(inflated));
  while (files_.size() > max_files_ || bytes_ > budget_) {
    bytes_ -= files_.back().second.size();
    files_.pop_back();
  }
}

std::size_t InflatedFiles::kept_bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

std::size_t InflatedFiles::kept_files() const {
  std::lock_guard lock(mutex_);
  return files_.size();
}

}  // namespace rulestream
