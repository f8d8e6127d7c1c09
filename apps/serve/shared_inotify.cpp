#include "apps/serve/shared_inotify.hpp"

#include "core/model/exceptions.hpp"
#include "sources/local/inotify_hub.hpp"

namespace rulestream {

SharedInotify::SharedInotify() : work_(io_.get_executor()) {
  try {
    hub_ = InotifyHub::open(io_.get_executor());
  } catch (const StorageError& error) {
    problem_ = error.what();
  }
  thread_ = std::thread([this] { io_.run(); });
}

SharedInotify::~SharedInotify() {
  if (hub_) hub_->close();  // posted to io_: runs before the work guard's end lets run() return
  work_.reset();
  thread_.join();
}

}  // namespace rulestream
