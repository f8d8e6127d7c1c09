#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>

#include "core/model/storage.hpp"
#include "sources/common/trial_source.hpp"

namespace rulestream {

// The source for a storage: LocalWatcher for a LocalStorage, S3Watcher for an S3Storage.
// Throws StorageError naming the storage when it is neither, or when it cannot announce what
// options.filter asks (follows_growth). The io_context must outlive it.
std::unique_ptr<TrialSource> make_trial_source(boost::asio::io_context& io,
                                               std::shared_ptr<const Storage> storage,
                                               TrialSourceOptions options,
                                               TrialSource::Callback on_files);

// Whether a source for `storage` can announce files as they grow (a filter with
// announces_growth): a local folder's can (inotify); S3's cannot, since an object rewritten
// larger under its key is behind ListObjectsV2's start-after.
bool follows_growth(const Storage& storage);

}  // namespace rulestream
