#include "pipeline/serve/job_discovery.hpp"

#include <algorithm>
#include <system_error>

#include "pipeline/model/exceptions.hpp"
#include "sources/open/storage_factory.hpp"

namespace rulestream {

JobDiscovery::JobDiscovery(std::vector<std::filesystem::path> roots, StorageOptions storage)
    : roots_(std::move(roots)), storage_(std::move(storage)) {
  for (const auto& root : roots_) {
    std::error_code error;
    if (!std::filesystem::is_directory(root, error)) {
      throw StorageError(root.string() + ": no such folder of jobs");
    }
  }
}

std::vector<FoundJob> JobDiscovery::scan(std::vector<std::string>& problems) {
  std::vector<FoundJob> found;
  for (const auto& root : roots_) {
    std::error_code error;
    std::filesystem::directory_iterator entries(root, error);
    if (error) {
      problems.push_back(root.string() + ": cannot list the folder of jobs: " + error.message());
      continue;
    }
    std::vector<std::filesystem::path> folders;
    for (const auto& entry : entries) {
      std::error_code type_error;
      if (entry.is_directory(type_error) && !known_.contains(entry.path())) {
        folders.push_back(entry.path());
      }
    }
    std::sort(folders.begin(), folders.end());  // ids handed out in a stable order
    for (const auto& folder : folders) {
      std::optional<TrialFormat> format;
      try {
        format = detect_format(*open_storage(folder.string(), storage_));
      } catch (const std::exception& failure) {
        problems.push_back(folder.string() + ": " + failure.what());
        continue;
      }
      if (!format) continue;
      known_.insert(folder);
      std::string id = folder.filename().string();
      for (int suffix = 2; ids_.contains(id); ++suffix) {
        id = folder.filename().string() + "-" + std::to_string(suffix);
      }
      ids_.insert(id);
      found.push_back({id, folder, *format});
    }
  }
  return found;
}

}  // namespace rulestream
