#include "pipeline/storage_factory.hpp"

#include "pipeline/exceptions.hpp"
#include "sources/local_storage.hpp"

namespace rulestream {

std::shared_ptr<const Storage> open_storage(const std::string& path) {
  if (path.starts_with("s3://")) {
    throw StorageError(path +
                       ": S3 trials are not supported by this build yet (local folders only)");
  }
  return std::make_shared<LocalStorage>(path);
}

}  // namespace rulestream
