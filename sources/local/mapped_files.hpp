#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "pipeline/model/shared_bytes.hpp"
#include "sources/local/file_leases.hpp"

namespace rulestream {

// Whole-file mappings of the files read most recently, by path: rules read values of the step
// they run at and of a few steps before, record by record, and each of those reads is then a
// lookup and a slice of the mapping instead of an open, a read and a copy. A mapping that
// leaves stays alive while any bytes cut from them are in use. A mapping whose lease broke (the
// file was opened for writing or cut short: LeasedMapping::detached) leaves at the next lookup:
// it holds the file as it was, and later reads must see it as it is. Thread-safe.
//
// A pipeline keeps a handful (kDefaultCapacity); an interactive reader walking a trial tensor by
// tensor visits every event file in turn and keeps hundreds (StorageOptions::local_kept_mappings),
// so lookups go through a hash index and an LRU list rather than a scan, and the scan for broken
// leases runs only after a break has happened somewhere in the process.
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
  struct Entry {
    std::string path;  // never reassigned while listed: the index's key views it
    SharedBytes mapping;
    std::shared_ptr<const LeasedMapping> lease;  // null for a copy
  };
  using Entries = std::list<Entry>;
  struct PathHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view path) const {
      return std::hash<std::string_view>{}(path);
    }
  };

  // Moves every entry whose lease broke into `leaving`. Under mutex_.
  void drop_detached(std::vector<Entry>& leaving);

  std::size_t capacity_;
  mutable std::mutex mutex_;
  Entries entries_;  // most recently used first
  std::unordered_map<std::string_view, Entries::iterator, PathHash, std::equal_to<>> by_path_;
  // LeasedMapping::breaks_handled() when entries_ were last scanned for broken leases.
  std::uint64_t breaks_seen_ = 0;
  // Paths of recent reads no mapping served, oldest overwritten first (a path is noted once
  // while it is among them), and the same paths as a set to look them up.
  std::vector<std::string> unmapped_reads_;
  std::size_t next_unmapped_read_ = 0;
  std::unordered_set<std::string, PathHash, std::equal_to<>> unmapped_paths_;
};

}  // namespace rulestream
