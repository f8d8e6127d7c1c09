#pragma once

#include <filesystem>

#include "pipeline/storage.hpp"

namespace rulestream {

// A trial in a local folder. Reads use pread on a fresh descriptor, so any number of threads
// may read at once; listing walks the folder (files named *.tmp are being written: skipped).
class LocalStorage final : public Storage {
 public:
  explicit LocalStorage(std::filesystem::path root);

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
  std::filesystem::path root_;
};

}  // namespace rulestream
