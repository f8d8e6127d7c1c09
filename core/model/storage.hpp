#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/shared_bytes.hpp"

namespace rulestream {

// One file of a trial, named relative to the trial's root ("index/000000000/..._worker_0.json").
struct StoredObject {
  std::string path;
  std::uint64_t size = 0;
  std::int64_t modified_ns = 0;  // modification time, nanoseconds since the epoch
  // Which file this is, where storage can tell (a local file's inode); 0 when it cannot (S3). A
  // name whose identity changed was replaced (written elsewhere and renamed over).
  std::uint64_t identity = 0;

  friend bool operator==(const StoredObject&, const StoredObject&) = default;
};

// A file opened for reads into buffers of the caller's (Storage::open_random_access). Safe to
// read from many threads at once. Errors are StorageError naming the file.
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  // Fills `buffer` from `offset`; fewer bytes only at the end of the file. Returns the count.
  virtual std::size_t read_at(std::uint64_t offset, std::span<std::byte> buffer) const = 0;
};

// One file of a storage, opened for many range reads of it (Storage::open_stored_file; the trial
// store keeps one per event file): what a read by path does on every call (checking the path,
// finding the file's kept mapping by it) is done once here. Safe to read from many threads at
// once; must not outlive the Storage that opened it.
class StoredFile {
 public:
  virtual ~StoredFile() = default;
  // As Storage::read_range of the file's path.
  virtual SharedBytes read_range(std::uint64_t offset, std::uint64_t length) const = 0;
};

// Where a trial's files live: a local folder or an S3 prefix. Implementations are safe to call
// from many threads at once. Paths are relative to the trial root and use '/'.
// Errors are StorageError naming the root and the path.
class Storage {
 public:
  virtual ~Storage() = default;

  // "/data/job1" or "s3://bucket/prefix": for messages.
  virtual std::string describe() const = 0;

  // Whether the trial root itself exists: a folder, or for S3 the bucket (a prefix exists only
  // once something is written under it, which a watch started before the job must not refuse).
  virtual bool root_exists() const = 0;

  // Files whose relative path starts with `prefix`, sorted by path. Files still being written
  // under a temporary name (*.tmp) are not listed. `start_after` skips paths <= it.
  virtual std::vector<StoredObject> list(std::string_view prefix,
                                         std::string_view start_after = {}) const = 0;

  virtual bool exists(std::string_view path) const = 0;

  // The whole file, or `length` bytes from `offset` (fewer if the file is shorter).
  virtual SharedBytes read(std::string_view path) const = 0;
  virtual SharedBytes read_range(std::string_view path, std::uint64_t offset,
                                 std::uint64_t length) const = 0;

  // As read_range, for a caller that cuts many records out of the bytes (a rule reading the
  // values of a whole step). Locally, a slice of the file's kept mapping when there is one, else
  // the range copied into a buffer storage hands out again once nothing holds it
  // (SharedBytes::recycled: what is kept for long should be copied out of it), or for a large
  // range the file mapped and kept now. Elsewhere read_range: one request for all the records.
  virtual SharedBytes read_records_range(std::string_view path, std::uint64_t offset,
                                         std::uint64_t length) const {
    return read_range(path, offset, length);
  }

  // What a whole-file mapping is for (map_whole): a reader about to go through most of the file
  // now (its pages are best mapped at once), or later reads that may take only some of it (a
  // pipeline keeping a file for its rules, which read one worker's values and not another's:
  // pages are then mapped as they are read).
  enum class MapFor { ReadingNow, LaterReads };

  // The whole file as a mapping that storage keeps for the next reads of it (read_range then
  // slices it), for a reader about to take many records from one file; its bytes are
  // SharedBytes::in_kept_mapping. nullopt where storage does not map (S3, a local folder with
  // mapping off, a file system that cannot map): read() instead.
  virtual std::optional<SharedBytes> map_whole(std::string_view path, MapFor purpose) const {
    static_cast<void>(path);
    static_cast<void>(purpose);
    return std::nullopt;
  }

  // The file opened for reads into the caller's buffers, for a reader that takes its records a
  // cache-sized batch at a time: each batch is still in cache when it is decoded and reduced,
  // and no page of a mapping faults in. nullptr where storage has no such reads (S3: a request
  // per batch would cost far more than the one for the file).
  virtual std::unique_ptr<RandomAccessFile> open_random_access(std::string_view path) const {
    static_cast<void>(path);
    return nullptr;
  }

  // `path` opened for many range reads (StoredFile). Opening checks nothing: a path that cannot
  // be read fails at each read, with read_range's error. Here, reads by path; LocalStorage's
  // find the file's kept mapping without a lookup.
  virtual std::unique_ptr<StoredFile> open_stored_file(std::string_view path) const;
};

namespace detail {
// Storage::open_stored_file's reads by path.
class StoredFileByPath final : public StoredFile {
 public:
  StoredFileByPath(const Storage& storage, std::string_view path)
      : storage_(storage), path_(path) {}
  SharedBytes read_range(std::uint64_t offset, std::uint64_t length) const override {
    return storage_.read_range(path_, offset, length);
  }

 private:
  const Storage& storage_;
  std::string path_;
};
}  // namespace detail

inline std::unique_ptr<StoredFile> Storage::open_stored_file(std::string_view path) const {
  return std::make_unique<detail::StoredFileByPath>(*this, path);
}

}  // namespace rulestream
