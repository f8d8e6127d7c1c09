#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline/model/shared_bytes.hpp"
#include "sources/local/file_leases.hpp"

namespace rulestream {

// Whole-file mappings of the files read most recently, by path: rules read values of the step
// they run at and of a few steps before, record by record, and each of those reads is then a
// lookup and a slice of the mapping instead of an open, a read and a copy. A mapping that
// leaves stays alive while any bytes cut from it are in use. A mapping whose lease broke (the
// file was opened for writing or cut short: LeasedMapping::detached) leaves at the next lookup:
// it holds the file as it was, and later reads must see it as it is. Thread-safe.
class MappedFiles {
 public:
  static constexpr std::size_t kDefaultCapacity = 16;

  explicit MappedFiles(std::size_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  // The kept mapping of `path` when it holds at least `min_size` bytes (a file that grew since
  // it was mapped is mapped again by the caller).
  std::optional<SharedBytes> find(std::string_view path, std::uint64_t min_size);

  // Keeps `mapping` as the mapping of `path` (replacing an older one), the least recently used
  // leaving beyond the capacity. `lease` is what `mapping` was cut from when it is a leased
  // mapping of the file; null for a copy.
  void keep(std::string_view path, SharedBytes mapping,
            std::shared_ptr<const LeasedMapping> lease = nullptr);

  // Notes a read of `path` that no kept mapping served; true when one was noted among the last
  // `capacity` such reads (a file read piece by piece: worth mapping whole and keeping).
  bool note_unmapped_read(std::string_view path);

  std::size_t size() const;

 private:
  std::size_t capacity_;
  mutable std::mutex mutex_;
  struct Entry {
    std::string path;
    SharedBytes mapping;
    std::shared_ptr<const LeasedMapping> lease;  // null for a copy
  };
  // Most recently used first; a handful of entries, so a scan beats any index.
  std::vector<Entry> entries_;
  // Paths of recent reads no mapping served, oldest overwritten first.
  std::vector<std::string> unmapped_reads_;
  std::size_t next_unmapped_read_ = 0;
};

}  // namespace rulestream
