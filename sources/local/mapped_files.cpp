#include "sources/local/mapped_files.hpp"

#include <utility>

namespace rulestream {

void MappedFiles::drop_detached(std::vector<Entry>& leaving) {
  for (auto entry = entries_.begin(); entry != entries_.end();) {
    if (entry->lease != nullptr && entry->lease->detached()) {
      by_path_.erase(entry->path);
      leaving.push_back(std::move(*entry));
      entry = entries_.erase(entry);
    } else {
      ++entry;
    }
  }
}

std::optional<SharedBytes> MappedFiles::find(std::string_view path, std::uint64_t min_size) {
  std::vector<Entry> leaving;  // unmapped (when nothing else holds them) after the lock is let go
  std::lock_guard lock(mutex_);
  // Mappings whose files were opened for writing or cut short since leave first, so that this
  // read and later ones see the file as it is now. The count of breaks is read before the
  // scan, and a break counts only once its mapping is marked detached, so a break that lands
  // during the scan is seen by the next lookup's.
  if (const std::uint64_t breaks = LeasedMapping::breaks_handled(); breaks != breaks_seen_) {
    breaks_seen_ = breaks;
    drop_detached(leaving);
  }
  const auto found = by_path_.find(path);
  if (found == by_path_.end()) return std::nullopt;
  const Entries::iterator entry = found->second;
  if (entry->lease != nullptr && entry->lease->detached()) {
    // Broken after the count above was read.
    by_path_.erase(found);
    leaving.push_back(std::move(*entry));
    entries_.erase(entry);
    return std::nullopt;
  }
  if (entry->mapping.size() < min_size) return std::nullopt;
  entries_.splice(entries_.begin(), entries_, entry);
  return entry->mapping;
}

void MappedFiles::keep(std::string_view path, SharedBytes mapping,
                       std::shared_ptr<const LeasedMapping> lease) {
  if (capacity_ == 0) return;
  Entry leaving;  // unmapped (when nothing else holds it) after the lock is let go
  std::lock_guard lock(mutex_);
  if (const auto found = by_path_.find(path); found != by_path_.end()) {
    const Entries::iterator entry = found->second;
    // The path stays: the index's key views it.
    leaving.mapping = std::exchange(entry->mapping, std::move(mapping));
    leaving.lease = std::exchange(entry->lease, std::move(lease));
    entries_.splice(entries_.begin(), entries_, entry);
    return;
  }
  if (entries_.size() == capacity_) {
    by_path_.erase(entries_.back().path);
    leaving = std::move(entries_.back());
    entries_.pop_back();
  }
  entries_.push_front({std::string(path), std::move(mapping), std::move(lease)});
  by_path_.emplace(entries_.front().path, entries_.begin());
}

bool MappedFiles::note_unmapped_read(std::string_view path) {
  if (capacity_ == 0) return false;
  std::lock_guard lock(mutex_);
  if (unmapped_paths_.find(path) != unmapped_paths_.end()) return true;
  if (unmapped_reads_.size() < capacity_) {
    unmapped_reads_.emplace_back(path);
  } else {
    std::string& oldest = unmapped_reads_[next_unmapped_read_];
    unmapped_paths_.erase(oldest);
    oldest = std::string(path);
    next_unmapped_read_ = (next_unmapped_read_ + 1) % capacity_;
  }
  unmapped_paths_.emplace(path);
  return false;
}

std::size_t MappedFiles::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace rulestream
