#include "sources/open/storage_factory.hpp"

#include "sources/local/local_storage.hpp"
#include "sources/s3/s3_storage.hpp"

namespace rulestream {

std::shared_ptr<const Storage> open_storage(const std::string& path,
                                            const StorageOptions& options) {
  if (path.starts_with("s3://")) return S3Storage::open(path, options);
  if (options.local_kept_mappings == 0) return std::make_shared<LocalStorage>(path);
  return std::make_shared<LocalStorage>(path, LocalStorage::kDefaultMapThreshold,
                                        options.local_kept_mappings);
}

}  // namespace rulestream
