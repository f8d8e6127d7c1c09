#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>

#include "pipeline/storage.hpp"

namespace rulestream {

// A trial in a local folder. Reads use a fresh descriptor each, so any number of threads may
// read at once; listing walks the folder (files named *.tmp are being written: skipped).
class LocalStorage final : public Storage {
 public:
  // Reads of at least this many bytes map the file instead of copying it with pread: from about
  // 4 MiB, mapping is faster and shares the page cache instead of doubling the memory
  // (benchmarks/local_storage_bench.cpp, results in benchmarks/RESULTS.md). The catch: mapped
  // bytes are not a snapshot. If another process rewrites a file in place, bytes still in use
  // change, and if it truncates the file, reading them raises SIGBUS. smdebug does neither (it
  // renames finished files into place, and only appends to open ones); pass kNeverMap where
  // something else might.
  static constexpr std::uint64_t kDefaultMapThreshold = std::uint64_t{4} << 20;
  static constexpr std::uint64_t kNeverMap = std::numeric_limits<std::uint64_t>::max();

  explicit LocalStorage(std::filesystem::path root,
                        std::uint64_t map_threshold = kDefaultMapThreshold);

  std::string describe() const override;
  bool root_exists() const override;
  std::vector<StoredObject> list(std::string_view prefix,
                                 std::string_view start_after = {}) const override;
  bool exists(std::string_view path) const override;
  SharedBytes read(std::string_view path) const override;
  SharedBytes read_range(std::string_view path, std::uint64_t offset,
                         std::uint64_t length) const override;

  const std::filesystem::path& root() const { return root_; }

 private:
  SharedBytes read_bytes(int fd, std::uint64_t offset, std::uint64_t length,
                         const std::string& full_path) const;

  std::filesystem::path root_;
  std::uint64_t map_threshold_;
};

}  // namespace rulestream
