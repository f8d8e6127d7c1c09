#include "sources/open/job_root.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "core/model/exceptions.hpp"
#include "sources/open/storage_factory.hpp"
#include "sources/s3/s3_storage.hpp"

namespace rulestream {
namespace {

class LocalJobRoot final : public JobRoot {
 public:
  LocalJobRoot(std::filesystem::path folder, StorageOptions options)
      : folder_(std::move(folder)), options_(std::move(options)) {
    std::error_code error;
    if (!std::filesystem::is_directory(folder_, error)) {
      throw StorageError(folder_.string() + ": no such folder of jobs");
    }
  }

  std::string describe() const override { return folder_.string(); }

  std::vector<JobFolder> list() const override {
    std::error_code error;
    std::filesystem::directory_iterator entries(folder_, error);
    if (error) {
      throw StorageError(folder_.string() + ": cannot list the folder of jobs: " + error.message());
    }
    std::vector<JobFolder> folders;
    for (const auto& entry : entries) {
      std::error_code type_error;
      if (entry.is_directory(type_error)) {
        folders.push_back({entry.path().filename().string(), entry.path().string()});
      }
    }
    std::sort(folders.begin(), folders.end(),
              [](const JobFolder& a, const JobFolder& b) { return a.name < b.name; });
    return folders;
  }

  std::shared_ptr<const Storage> open(const JobFolder& folder) const override {
    return open_storage(folder.location, options_);
  }

 private:
  std::filesystem::path folder_;
  StorageOptions options_;
};

class S3JobRoot final : public JobRoot {
 public:
  S3JobRoot(const std::string& uri, const StorageOptions& options)
      : root_(S3Storage::open(uri, options)) {
    try {
      root_->root_exists();  // throws for a missing bucket, a refusal, a server away
    } catch (const StorageError& error) {
      const std::string what = error.what();
      if (what.starts_with(describe() + ":")) throw;  // a missing bucket, named already
      throw StorageError(describe() + ": cannot list the jobs: " + what);
    }
  }

  std::string describe() const override { return root_->describe(); }

  std::vector<JobFolder> list() const override {
    std::vector<JobFolder> folders;
    try {
      for (std::string& name : root_->list_folders()) {
        folders.push_back({name, root_->child(name)->describe()});
      }
    } catch (const StorageError& error) {
      // The client names the bucket only: say which root's listing it was.
      throw StorageError(describe() + ": cannot list the jobs: " + error.what());
    }
    return folders;  // S3 lists in key order, which is name order
  }

  std::shared_ptr<const Storage> open(const JobFolder& folder) const override {
    return root_->child(folder.name);
  }

 private:
  std::shared_ptr<const S3Storage> root_;
};

}  // namespace

std::unique_ptr<JobRoot> open_job_root(const std::string& root, const StorageOptions& options) {
  if (root.starts_with("s3://")) return std::make_unique<S3JobRoot>(root, options);
  return std::make_unique<LocalJobRoot>(root, options);
}

}  // namespace rulestream
