#include "sources/open/trial_source_factory.hpp"

#include "core/model/exceptions.hpp"
#include "sources/local/local_storage.hpp"
#include "sources/local/local_watcher.hpp"
#include "sources/s3/s3_storage.hpp"
#include "sources/s3/s3_watcher.hpp"

namespace rulestream {

std::unique_ptr<TrialSource> make_trial_source(boost::asio::io_context& io,
                                               std::shared_ptr<const Storage> storage,
                                               TrialSourceOptions options,
                                               TrialSource::Callback on_files) {
  if (const auto* local = dynamic_cast<const LocalStorage*>(storage.get())) {
    return std::make_unique<LocalWatcher>(
        io, local->root(),
        LocalWatcher::Options{.follow = options.follow,
                              .rescan_interval = options.poll_interval,
                              .rescan_while_watching = options.rescan_while_watching,
                              .filter = options.filter,
                              .inotify_hub = std::move(options.inotify_hub)},
        std::move(on_files));
  }
  if (options.filter.announces_growth) {
    throw StorageError(storage->describe() + ": files that grow in place cannot be followed here");
  }
  if (auto s3 = std::dynamic_pointer_cast<const S3Storage>(storage)) {
    return std::make_unique<S3Watcher>(
        io, std::move(s3),
        S3Watcher::Options{.follow = options.follow, .poll_interval = options.poll_interval},
        std::move(on_files));
  }
  throw StorageError(storage->describe() + ": no source can follow this kind of storage");
}

bool follows_growth(const Storage& storage) {
  return dynamic_cast<const LocalStorage*>(&storage) != nullptr;
}

}  // namespace rulestream
