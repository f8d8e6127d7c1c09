#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>

#include "pipeline/model/storage.hpp"
#include "sources/common/trial_source.hpp"

namespace rulestream {

// The source for a storage: LocalWatcher for a LocalStorage, S3Watcher for an S3Storage.
// Throws StorageError naming the storage when it is neither. The io_context must outlive it.
std::unique_ptr<TrialSource> make_trial_source(boost::asio::io_context& io,
                                               std::shared_ptr<const Storage> storage,
                                               TrialSourceOptions options,
                                               TrialSource::Callback on_files);

}  // namespace rulestream
