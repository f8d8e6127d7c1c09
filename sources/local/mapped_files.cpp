#include "sources/local/mapped_files.hpp"

#include <utility>

namespace rulestream {

std::optional<SharedBytes> MappedFiles::Handle::slice(std::uint64_t offset,
                                                      std::uint64_t length) const {
  Slot& slot = *slot_;
  std::lock_guard lock(slot.mutex);
  if (!slot.kept || length > slot.what.mapping.size() ||
      offset > slot.what.mapping.size() - length) {
    return std::nullopt;
  }
  // Broken since it was kept: the caller's read by path drops it and reads the file as it is.
  if (slot.what.lease != nullptr && slot.what.lease->detached()) return std::nullopt;
  // Read before written: readers of one file do not all write its cache line.
  if (!slot.read_through_handle.load(std::memory_order_relaxed)) {
    slot.read_through_handle.store(true, std::memory_order_relaxed);
  }
  return slot.what.mapping.slice(static_cast<std::size_t>(offset),
                                 static_cast<std::size_t>(length));
}

MappedFiles::~MappedFiles() {
  // Handles may outlive this: what their slots keep goes now, and they find nothing after.
  std::vector<Kept> leaving;
  std::lock_guard lock(mutex_);
  while (!kept_.empty()) unkeep(*kept_.front(), leaving);
}

MappedFiles::Slot& MappedFiles::slot_for(std::string_view path) {
  if (const auto found = slots_.find(path); found != slots_.end()) return *found->second;
  auto slot = std::make_shared<Slot>(path);
  Slot& made = *slot;
  slots_.emplace(made.path, std::move(slot));
  return made;
}

void MappedFiles::unkeep(Slot& slot, std::vector<Kept>& leaving) {
  {
    std::lock_guard lock(slot.mutex);
    slot.kept = false;
    leaving.push_back(std::move(slot.what));
    slot.what = {};
  }
  kept_.erase(slot.place);
  slot.listed = false;
  // Only the index holds it (handles are made under mutex_, so none can appear meanwhile).
  if (const auto found = slots_.find(slot.path);
      found != slots_.end() && found->second.use_count() == 1) {
    slots_.erase(found);  // `slot` is gone from here on
  }
}

void MappedFiles::evict_one(std::vector<Kept>& leaving) {
  // Each entry gets at most one second chance per eviction, so this ends even while handles
  // keep reading every kept file.
  for (std::size_t passed = 0; passed < kept_.size(); ++passed) {
    Slot& oldest = *kept_.back();
    if (!oldest.read_through_handle.exchange(false, std::memory_order_relaxed)) break;
    kept_.splice(kept_.begin(), kept_, oldest.place);
  }
  unkeep(*kept_.back(), leaving);
}

void MappedFiles::drop_detached(std::vector<Kept>& leaving) {
  for (auto entry = kept_.begin(); entry != kept_.end();) {
    Slot& slot = **entry;
    ++entry;  // unkeep erases slot's own place only
    if (slot.what.lease != nullptr && slot.what.lease->detached()) unkeep(slot, leaving);
  }
}

std::optional<SharedBytes> MappedFiles::find(std::string_view path, std::uint64_t min_size) {
  std::vector<Kept> leaving;  // unmapped (when nothing else holds them) after the lock is let go
  std::lock_guard lock(mutex_);
  // Mappings whose files were opened for writing or cut short since leave first, so that this
  // read and later ones see the file as it is now. The count of breaks is read before the
  // scan, and a break counts only once its mapping is marked detached, so a break that lands
  // during the scan is seen by the next lookup's.
  if (const std::uint64_t breaks = LeasedMapping::breaks_handled(); breaks != breaks_seen_) {
    breaks_seen_ = breaks;
    drop_detached(leaving);
  }
  const auto found = slots_.find(path);
  if (found == slots_.end() || !found->second->listed) return std::nullopt;
  Slot& slot = *found->second;
  // `what` changes only under mutex_ (and its own), so reading it needs no more than mutex_.
  if (slot.what.lease != nullptr && slot.what.lease->detached()) {
    // Broken after the count above was read.
    unkeep(slot, leaving);
    return std::nullopt;
  }
  if (slot.what.mapping.size() < min_size) return std::nullopt;
  kept_.splice(kept_.begin(), kept_, slot.place);
  return slot.what.mapping;
}

void MappedFiles::keep(std::string_view path, SharedBytes mapping,
                       std::shared_ptr<const LeasedMapping> lease) {
  if (capacity_ == 0) return;
  std::vector<Kept> leaving;  // unmapped (when nothing else holds it) after the lock is let go
  std::lock_guard lock(mutex_);
  Slot& slot = slot_for(path);
  if (slot.listed) {
    kept_.splice(kept_.begin(), kept_, slot.place);
  } else {
    if (kept_.size() == capacity_) evict_one(leaving);
    kept_.push_front(&slot);
    slot.place = kept_.begin();
    slot.listed = true;
  }
  std::lock_guard slot_lock(slot.mutex);
  leaving.push_back(std::exchange(slot.what, Kept{std::move(mapping), std::move(lease)}));
  slot.kept = true;
}

MappedFiles::Handle MappedFiles::handle(std::string_view path) {
  std::lock_guard lock(mutex_);
  slot_for(path);
  return Handle(slots_.find(path)->second);
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
  return kept_.size();
}

}  // namespace rulestream
