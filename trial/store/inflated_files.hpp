#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <utility>

#include "core/model/shared_bytes.hpp"
#include "trial/store/record_cache.hpp"

namespace rulestream {

// Event files a trial found compressed, kept inflated for the records read from them next.
// A compressed file's record offsets count inflated bytes, so reading one record means
// inflating the whole file; rules read many records of a file one after another (a step's
// values), and without this each one inflated the file again.
// The most recently used files are kept, at most `max_files` of them and `budget_bytes` in all;
// a file larger than the budget is not kept. Thread-safe.
class InflatedFiles {
 public:
  InflatedFiles(std::size_t budget_bytes, std::size_t max_files)
      : budget_(budget_bytes), max_files_(max_files) {}

  // The file as kept, when it is and holds at least `needed` bytes (a file still being written
  // may have grown since it was inflated); nullopt otherwise.
  std::optional<SharedBytes> find(FileId file, std::size_t needed);
  // Keeps `inflated` as the file's, in place of what was kept for it.
  void keep(FileId file, SharedBytes inflated);

  std::size_t kept_bytes() const;
  std::size_t kept_files() const;

 private:
  std::size_t budget_;
  std::size_t max_files_;
  mutable std::mutex mutex_;
  std::list<std::pair<FileId, SharedBytes>> files_;  // most recently used first
  std::size_t bytes_ = 0;
};

}  // namespace rulestream
