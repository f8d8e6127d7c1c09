#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>

#include "core/model/storage.hpp"
#include "sources/local/mapped_files.hpp"
#include "sources/local/recycled_buffers.hpp"

namespace rulestream {

// A trial in a local folder. Reads use a fresh descriptor each, so any number of threads may
// read at once; listing walks the folder (files named *.tmp are being written: skipped).
// Whole-file mappings are kept for the most recently mapped files (MappedFiles): those made by
// map_whole, and those of files read by range twice lately; a read_range of a kept file is a
// slice of its mapping. Every mapping is made under a read lease (LeasedMapping,
// sources/local/file_leases.hpp): a file open for writing anywhere, or one that cannot be leased,
// is read by copy instead, and when another process opens a mapped file for writing or cuts it
// short, the bytes handed out keep what they held (a private copy moves in under them) and
// later reads see the file as it is then. A kept copy of a small file (up to 64 KiB) is not
// leased: one rewritten in place is seen once the copy has left or a range runs past its end
// (smdebug never rewrites: it renames new files into place once).
class LocalStorage final : public Storage {
 public:
  // Reads of at least this many bytes map the file instead of copying it with pread: from about
  // 4 MiB, mapping is faster and shares the page cache instead of doubling the memory
  // (benchmarks/local_storage_bench.cpp, results in benchmarks/RESULTS.md). Mapped bytes would
  // not be a snapshot (a file cut short in place would make reading them raise SIGBUS): the
  // read lease every mapping is made under is what makes them one (see above). kNeverMap
  // copies every read.
  static constexpr std::uint64_t kDefaultMapThreshold = std::uint64_t{4} << 20;
  static constexpr std::uint64_t kNeverMap = std::numeric_limits<std::uint64_t>::max();
  // The largest range read_records_range copies into a recycled buffer rather than mapping the
  // file: a larger one is mapped, where the copy would cost more than the mapping.
  static constexpr std::uint64_t kLargestRecycledRead = std::uint64_t{4} << 20;

  // `kept_mappings`: how many whole-file mappings (or copies of small files) are kept for later
  // reads (MappedFiles).
  explicit LocalStorage(std::filesystem::path root,
                        std::uint64_t map_threshold = kDefaultMapThreshold,
                        std::size_t kept_mappings = MappedFiles::kDefaultCapacity);

  std::string describe() const override;
  bool root_exists() const override;
  std::vector<StoredObject> list(std::string_view prefix,
                                 std::string_view start_after = {}) const override;
  bool exists(std::string_view path) const override;
  SharedBytes read(std::string_view path) const override;
  SharedBytes read_range(std::string_view path, std::uint64_t offset,
                         std::uint64_t length) const override;
  // A slice of the kept mapping when one covers the range; else a range of at most
  // kLargestRecycledRead copied into a recycled buffer (SharedBytes::recycled); else the file
  // mapped whole and kept (populated when the range is most of a file of at most 64 MiB).
  // read_range when mapping is off or the file cannot be leased or mapped.
  SharedBytes read_records_range(std::string_view path, std::uint64_t offset,
                                 std::uint64_t length) const override;
  // Whatever the threshold, unless it is kNeverMap or the file cannot be leased or mapped (then
  // nullopt). An empty file is empty bytes.
  std::optional<SharedBytes> map_whole(std::string_view path, MapFor purpose) const override;
  // Reads with pread on a descriptor opened here; the file as it is at each read.
  std::unique_ptr<RandomAccessFile> open_random_access(std::string_view path) const override;
  // A read of it is a slice of its kept mapping found through the file's own slot
  // (MappedFiles::Handle: no path check, no lookup by path, no shared lock), or read_range by
  // path where none covers the range (which drops a mapping whose lease broke, and maps or
  // copies as read_range does). Reads by path only when mapping is off or the path climbs out
  // of the trial (each read then fails as read_range fails).
  std::unique_ptr<StoredFile> open_stored_file(std::string_view path) const override;

  const std::filesystem::path& root() const { return root_; }

 private:
  // Maps the whole open file (`size` bytes) and keeps the mapping for `path`'s later reads (a
  // file of up to 64 KiB: a copy); nullopt where the file cannot be leased or mapped.
  std::optional<SharedBytes> keep_whole_mapping(int fd, std::string_view path, std::uint64_t size,
                                                bool populate) const;
  SharedBytes read_bytes(int fd, std::uint64_t offset, std::uint64_t length,
                         const std::string& full_path) const;

  std::filesystem::path root_;
  std::uint64_t map_threshold_;
  // Null when mapping is off. A pointer: MappedFiles holds a mutex, storage is const to readers.
  std::unique_ptr<MappedFiles> mapped_files_;
  // For read_records_range (a pointer for the same reason).
  std::unique_ptr<RecycledBuffers> recycled_ =
      std::make_unique<RecycledBuffers>(8, static_cast<std::size_t>(kLargestRecycledRead));
};

}  // namespace rulestream
