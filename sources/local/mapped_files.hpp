#pragma once

#include <atomic>
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

#include "core/model/shared_bytes.hpp"
#include "sources/local/file_leases.hpp"

namespace rulestream {

// Whole-file mappings of the files read most recently, by path: rules read values of the step
// they run at and of a few steps before, record by record, and each of those reads is then a
// lookup and a slice of the mapping instead of an open, a read and a copy. A mapping that
// leaves stays alive while any bytes cut from them are in use. A mapping whose lease broke (the
// file was opened for writing or cut short: LeasedMapping::detached) is never handed out again,
// and leaves at the next lookup by path: it holds the file as it was, and later reads must see
// it as it is.
//
// A pipeline keeps a handful (kDefaultCapacity); an interactive reader walking a trial tensor by
// tensor visits every event file in turn and keeps hundreds (StorageOptions::local_kept_mappings),
// so lookups go through a hash index and an LRU list rather than a scan, and the scan for broken
// leases runs only after a break has happened somewhere in the process.
//
// A reader that reads one file many times holds a Handle on it (LocalStorage::open_stored_file,
// kept by the trial store per event file): the file's own slot, so a read takes that slot's lock
// only, not the lock of every file, hashes no path and moves nothing in the LRU list. Such a
// read marks the slot used instead, and the LRU list heeds the mark when it next lets a mapping
// go: an entry read through a handle since the list last passed it gets a second chance at the
// front (reads by path move their entry at once, as before). The capacity holds either way.
//
// Concurrency: thread-safe. mutex_ guards the index, the list and every slot's place in them; a
// slot's own mutex guards what it keeps, and is taken after mutex_ where both are (find, keep,
// eviction) or alone (a handle's read), so handles on different files never meet.
class MappedFiles {
  struct Slot;

 public:
  static constexpr std::size_t kDefaultCapacity = 16;

  // One path's place among the kept mappings, found once (MappedFiles::handle): it sees the
  // path's mapping whenever one is kept, made before or after the handle. Copyable; reads from
  // many threads at once; may outlive the MappedFiles that made it (then it finds nothing).
  class Handle {
   public:
    // `length` bytes from `offset` of the kept mapping, when one is kept that covers them and
    // its lease has not broken; else nullopt, and the caller reads by path (which drops a
    // mapping whose lease broke, and maps the file again where it should).
    std::optional<SharedBytes> slice(std::uint64_t offset, std::uint64_t length) const;

   private:
    friend class MappedFiles;
    explicit Handle(std::shared_ptr<Slot> slot) : slot_(std::move(slot)) {}
    std::shared_ptr<Slot> slot_;
  };

  explicit MappedFiles(std::size_t capacity = kDefaultCapacity) : capacity_(capacity) {}
  ~MappedFiles();
  MappedFiles(const MappedFiles&) = delete;
  MappedFiles& operator=(const MappedFiles&) = delete;

  // The kept mapping of `path` when it holds at least `min_size` bytes (a file that grew since
  // it was mapped is mapped again by the caller).
  std::optional<SharedBytes> find(std::string_view path, std::uint64_t min_size);

  // Keeps `mapping` as the mapping of `path` (replacing an older one), the least recently used
  // leaving beyond the capacity. `lease` is what `mapping` was cut from when it is a leased
  // mapping of the file; null for a copy.
  void keep(std::string_view path, SharedBytes mapping,
            std::shared_ptr<const LeasedMapping> lease = nullptr);

  // The handle on `path`: the same slot for the same path while anything holds it.
  Handle handle(std::string_view path);

  // Notes a read of `path` that no kept mapping served; true when one was noted among the last
  // `capacity` such reads (a file read piece by piece: worth mapping whole and keeping).
  bool note_unmapped_read(std::string_view path);

  std::size_t size() const;

 private:
  using KeptList = std::list<Slot*>;
  // What a slot keeps, moved out to be let go of after the locks are released (unmapping while
  // holding them would make every reader wait for the munmap).
  struct Kept {
    SharedBytes mapping;
    std::shared_ptr<const LeasedMapping> lease;  // null for a copy
  };
  struct Slot {
    explicit Slot(std::string_view of) : path(of) {}
    const std::string path;  // the index's key views it
    // Set by a handle's read, cleared when eviction gives the slot its second chance.
    std::atomic<bool> read_through_handle{false};
    // Under mutex_: whether the slot is in kept_, and where.
    bool listed = false;
    KeptList::iterator place;
    // Under `mutex` (and mutex_ to change them): what is kept; `kept` false once it left.
    mutable std::mutex mutex;
    bool kept = false;
    Kept what;
  };
  struct PathHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view path) const {
      return std::hash<std::string_view>{}(path);
    }
  };

  // The slot of `path`, made when there is none. Under mutex_.
  Slot& slot_for(std::string_view path);
  // Takes `slot` out of the list and what it keeps into `leaving`; forgets the slot when nothing
  // else (no handle) holds it. Under mutex_.
  void unkeep(Slot& slot, std::vector<Kept>& leaving);
  // Lets the least recently used go, after giving those read through handles since the list
  // last passed them a second chance. Under mutex_, with kept_ full.
  void evict_one(std::vector<Kept>& leaving);
  // Moves what every slot whose lease broke keeps into `leaving`. Under mutex_.
  void drop_detached(std::vector<Kept>& leaving);

  std::size_t capacity_;
  mutable std::mutex mutex_;
  KeptList kept_;  // most recently used first
  // Every path kept or handled: a slot leaves with its mapping once no handle holds it. One that
  // only handles ever held stays after they go, until its path is next kept and leaves: a few
  // dozen bytes per event file a trial store opened (stores keep their handles for life).
  std::unordered_map<std::string_view, std::shared_ptr<Slot>, PathHash, std::equal_to<>> slots_;
  // LeasedMapping::breaks_handled() when kept_ was last scanned for broken leases.
  std::uint64_t breaks_seen_ = 0;
  // Paths of recent reads no mapping served, oldest overwritten first (a path is noted once
  // while it is among them), and the same paths as a set to look them up.
  std::vector<std::string> unmapped_reads_;
  std::size_t next_unmapped_read_ = 0;
  std::unordered_set<std::string, PathHash, std::equal_to<>> unmapped_paths_;
};

}  // namespace rulestream
