#include "sources/local/mapped_files.hpp"

#include <algorithm>
#include <utility>

namespace rulestream {

std::optional<SharedBytes> MappedFiles::find(std::string_view path, std::uint64_t min_size) {
  std::vector<Entry> leaving;  // unmapped (when nothing else holds them) after the lock is let go
  std::lock_guard lock(mutex_);
  // Mappings whose files were opened for writing or cut short since leave first, so that this
  // read and later ones see the file as it is now.
  // (A scan of a handful of flags; nothing is allocated unless one leaves.)
  for (auto entry = entries_.begin(); entry != entries_.end();) {
    if (entry->lease != nullptr && entry->lease->detached()) {
      leaving.push_back(std::move(*entry));
      entry = entries_.erase(entry);
    } else {
      ++entry;
    }
  }
  const auto it = std::find_if(entries_.begin(), entries_.end(),
                               [&](const Entry& entry) { return entry.path == path; });
  if (it == entries_.end() || it->mapping.size() < min_size) return std::nullopt;
  std::rotate(entries_.begin(), it, it + 1);
  return entries_.front().mapping;
}

void MappedFiles::keep(std::string_view path, SharedBytes mapping,
                       std::shared_ptr<const LeasedMapping> lease) {
  if (capacity_ == 0) return;
  Entry leaving;  // unmapped (when nothing else holds it) after the lock is let go
  std::lock_guard lock(mutex_);
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const Entry& entry) { return entry.path == path; });
  if (it != entries_.end()) {
    leaving = std::exchange(*it, Entry{std::string(path), std::move(mapping), std::move(lease)});
  } else {
    if (entries_.size() == capacity_) {
      leaving = std::move(entries_.back());
      entries_.pop_back();
    }
    entries_.push_back({std::string(path), std::move(mapping), std::move(lease)});
    it = entries_.end() - 1;
  }
  std::rotate(entries_.begin(), it, it + 1);
}

bool MappedFiles::note_unmapped_read(std::string_view path) {
  if (capacity_ == 0) return false;
  std::lock_guard lock(mutex_);
  if (std::find(unmapped_reads_.begin(), unmapped_reads_.end(), path) != unmapped_reads_.end()) {
    return true;
  }
  if (unmapped_reads_.size() < capacity_) {
    unmapped_reads_.emplace_back(path);
  } else {
    unmapped_reads_[next_unmapped_read_] = std::string(path);
    next_unmapped_read_ = (next_unmapped_read_ + 1) % capacity_;
  }
  return false;
}

std::size_t MappedFiles::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace rulestream
