#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <optional>

#include "core/model/memory_budget.hpp"
#include "core/model/shared_bytes.hpp"
#include "trial/store/record_cache.hpp"

namespace rulestream {

// Event files a trial found compressed, kept inflated for the records read from them next.
// A compressed file's record offsets count inflated bytes, so reading one record means
// inflating the whole file; rules read many records of a file one after another (a step's
// values), and without this each one inflated the file again.
// The most recently used files are kept, at most `max_files` of them, each with the bytes its
// inflation took from the job's MemoryBudget: the budget, not this cache, bounds their size.
// Work that needs bytes the budget lacks has the least recently used files leave (reclaim).
// Thread-safe; the cache holds the budget (shared) as long as it lives.
class InflatedFiles final : private MemoryBudget::Reclaimer {
 public:
  InflatedFiles(std::shared_ptr<MemoryBudget> budget, std::size_t max_files);
  ~InflatedFiles();
  InflatedFiles(const InflatedFiles&) = delete;
  InflatedFiles& operator=(const InflatedFiles&) = delete;

  // The file as kept, when it is and holds at least `needed` bytes (a file still being written
  // may have grown since it was inflated); nullopt otherwise.
  std::optional<SharedBytes> find(FileId file, std::size_t needed);
  // Keeps `inflated`, whose bytes `reservation` holds in the budget, as the file's, in place of
  // what was kept for it.
  void keep(FileId file, SharedBytes inflated, MemoryReservation reservation);

  // What the kept files hold in the budget.
  std::size_t kept_bytes() const;
  std::size_t kept_files() const;

 private:
  struct Kept {
    FileId file;
    SharedBytes inflated;
    MemoryReservation reservation;
  };

  std::size_t reclaim(std::size_t bytes) override;

  std::shared_ptr<MemoryBudget> budget_;
  std::size_t max_files_;
  mutable std::mutex mutex_;
  std::list<Kept> files_;  // most recently used first
};

}  // namespace rulestream
