#include "trial/store/inflated_files.hpp"

#include <utility>

namespace rulestream {

InflatedFiles::InflatedFiles(std::shared_ptr<MemoryBudget> budget, std::size_t max_files)
    : budget_(std::move(budget)), max_files_(max_files) {
  budget_->add_reclaimer(*this);
}

InflatedFiles::~InflatedFiles() {
  // Out of the budget's reach first: a reclaim on another thread must not find it half gone.
  budget_->remove_reclaimer(*this);
}

std::optional<SharedBytes> InflatedFiles::find(FileId file, std::size_t needed) {
  std::lock_guard lock(mutex_);
  for (auto it = files_.begin(); it != files_.end(); ++it) {
    if (it->file != file) continue;
    if (it->inflated.size() < needed) return std::nullopt;
    files_.splice(files_.begin(), files_, it);
    return files_.front().inflated;
  }
  return std::nullopt;
}

void InflatedFiles::keep(FileId file, SharedBytes inflated, MemoryReservation reservation) {
  std::list<Kept> leaving;  // given back after the lock: releasing wakes waiting work
  {
    std::lock_guard lock(mutex_);
    for (auto it = files_.begin(); it != files_.end(); ++it) {
      if (it->file == file) {
        leaving.splice(leaving.end(), files_, it);
        break;
      }
    }
    files_.push_front({file, std::move(inflated), std::move(reservation)});
    while (files_.size() > max_files_)
      leaving.splice(leaving.end(), files_, std::prev(files_.end()));
  }
}

std::size_t InflatedFiles::reclaim(std::size_t bytes) {
  std::list<Kept> leaving;
  std::size_t given = 0;
  {
    std::lock_guard lock(mutex_);
    while (given < bytes && !files_.empty()) {
      given += files_.back().reservation.bytes();
      leaving.splice(leaving.end(), files_, std::prev(files_.end()));
    }
  }
  return given;
}

std::size_t InflatedFiles::kept_bytes() const {
  std::lock_guard lock(mutex_);
  std::size_t bytes = 0;
  for (const Kept& kept : files_) bytes += kept.reservation.bytes();
  return bytes;
}

std::size_t InflatedFiles::kept_files() const {
  std::lock_guard lock(mutex_);
  return files_.size();
}

}  // namespace rulestream
