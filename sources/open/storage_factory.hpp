#pragma once

#include <memory>
#include <string>

#include "core/model/storage.hpp"
#include "core/model/storage_options.hpp"

namespace rulestream {

// The storage for a trial path: a local folder, or an s3://bucket/prefix.
// Throws StorageError for a path it cannot serve.
std::shared_ptr<const Storage> open_storage(const std::string& path,
                                            const StorageOptions& options = {});

}  // namespace rulestream
