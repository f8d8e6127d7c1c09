#include "sources/local/inotify_hub.hpp"

#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <system_error>
#include <utility>

#include "core/model/exceptions.hpp"

namespace rulestream {
namespace {

// Room for many records per read; one record needs at most sizeof(inotify_event) + NAME_MAX + 1.
constexpr std::size_t kEventBufferSize = 64 * 1024;

}  // namespace

std::shared_ptr<InotifyHub> InotifyHub::open(boost::asio::any_io_executor executor) {
  const int descriptor = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (descriptor < 0) {
    throw StorageError("cannot start inotify: " + std::generic_category().message(errno));
  }
  std::shared_ptr<InotifyHub> hub(new InotifyHub(std::move(executor), descriptor));
  hub->read();
  return hub;
}

InotifyHub::InotifyHub(boost::asio::any_io_executor executor, int descriptor)
    : executor_(std::move(executor)),
      descriptor_(std::in_place, executor_),
      buffer_(kEventBufferSize),
      native_(descriptor) {
  boost::system::error_code error;
  descriptor_->assign(descriptor, error);  // registers it with the reactor, which can fail too
  if (error) {
    ::close(descriptor);
    throw StorageError("cannot start inotify: " + error.message());
  }
}

InotifyHub::~InotifyHub() = default;  // an open descriptor closes with descriptor_

InotifyHub::Subscriber InotifyHub::subscribe(boost::asio::any_io_executor executor,
                                             Handler handler) {
  std::lock_guard lock(mutex_);
  const Subscriber subscriber = next_subscriber_++;
  subscriptions_.emplace(subscriber, Subscription{std::move(executor), std::move(handler), {}});
  return subscriber;
}

void InotifyHub::unsubscribe(Subscriber subscriber) {
  std::lock_guard lock(mutex_);
  const auto found = subscriptions_.find(subscriber);
  if (found == subscriptions_.end()) return;
  for (const int watch : found->second.watches) release_watch(subscriber, watch);
  subscriptions_.erase(found);
}

int InotifyHub::add_watch(Subscriber subscriber, const std::string& path, std::uint32_t mask) {
  // Under the lock from the kernel's call to the map's entry: the reading thread looks a watch
  // up under it too, so its first event cannot arrive before its owner is known.
  std::lock_guard lock(mutex_);
  if (closed_) return -EBADF;
  const auto found = subscriptions_.find(subscriber);
  if (found == subscriptions_.end()) return -EINVAL;
  const int watch = ::inotify_add_watch(native_, path.c_str(), mask);
  if (watch < 0) return -errno;
  auto& owners = subscribers_of_watch_[watch];
  if (std::find(owners.begin(), owners.end(), subscriber) == owners.end()) {
    owners.push_back(subscriber);
    found->second.watches.push_back(watch);
  }
  return watch;
}

void InotifyHub::remove_watch(Subscriber subscriber, int watch) {
  std::lock_guard lock(mutex_);
  const auto found = subscriptions_.find(subscriber);
  if (found == subscriptions_.end()) return;
  auto& watches = found->second.watches;
  const auto at = std::find(watches.begin(), watches.end(), watch);
  if (at == watches.end()) return;
  watches.erase(at);
  release_watch(subscriber, watch);
}

void InotifyHub::release_watch(Subscriber subscriber, int watch) {
  const auto owners = subscribers_of_watch_.find(watch);
  if (owners == subscribers_of_watch_.end()) return;
  std::erase(owners->second, subscriber);
  if (!owners->second.empty()) return;
  subscribers_of_watch_.erase(owners);
  // Its IN_IGNORED and any event still queued find no owner and are dropped.
  if (!closed_) ::inotify_rm_watch(native_, watch);
}

void InotifyHub::close() {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = true;
    subscribers_of_watch_.clear();
    for (auto& [subscriber, subscription] : subscriptions_) subscription.watches.clear();
  }
  // The descriptor belongs to the reading executor: destroyed there, which cancels the read.
  boost::asio::post(executor_, [self = shared_from_this()] { self->descriptor_.reset(); });
}

std::size_t InotifyHub::subscriber_count() const {
  std::lock_guard lock(mutex_);
  return subscriptions_.size();
}

std::size_t InotifyHub::watch_count() const {
  std::lock_guard lock(mutex_);
  return subscribers_of_watch_.size();
}

void InotifyHub::read() {
  if (!descriptor_) return;  // closed
  descriptor_->async_read_some(
      boost::asio::buffer(buffer_.data() + buffered_, buffer_.size() - buffered_),
      [self = shared_from_this()](const boost::system::error_code& error, std::size_t count) {
        self->on_read(error, count);
      });
}

void InotifyHub::on_read(const boost::system::error_code& error, std::size_t count) {
  if (error == boost::asio::error::operation_aborted) return;
  if (error) {
    {
      std::lock_guard lock(mutex_);
      if (closed_) return;
      tell_everyone(Delivery{.failure = "cannot read inotify events: " + error.message()});
    }
    close();
    return;
  }
  buffered_ += count;
  std::vector<InotifyEvent> events;
  const std::size_t consumed =
      parse_inotify_events(std::span<const char>(buffer_.data(), buffered_), events);
  // A record cut short stays at the front; the next read completes it.
  std::copy(buffer_.begin() + static_cast<std::ptrdiff_t>(consumed),
            buffer_.begin() + static_cast<std::ptrdiff_t>(buffered_), buffer_.begin());
  buffered_ -= consumed;
  dispatch(events);
  if (buffered_ == buffer_.size()) {
    // Cannot happen with a buffer larger than the largest record; never spin on it.
    {
      std::lock_guard lock(mutex_);
      tell_everyone(Delivery{.failure = "an inotify record larger than " +
                                        std::to_string(buffer_.size()) + " bytes"});
    }
    close();
    return;
  }
  read();
}

void InotifyHub::dispatch(const std::vector<InotifyEvent>& events) {
  std::lock_guard lock(mutex_);
  if (closed_) return;
  // One delivery per subscriber and read, its events in the kernel's order.
  std::map<Subscriber, Delivery> deliveries;
  bool overflow = false;
  for (const InotifyEvent& event : events) {
    if (event.mask & IN_Q_OVERFLOW) {
      overflow = true;
      continue;
    }
    const auto owners = subscribers_of_watch_.find(event.watch);
    if (owners == subscribers_of_watch_.end()) continue;  // let go of since
    for (const Subscriber subscriber : owners->second) {
      deliveries[subscriber].events.push_back(event);
    }
    if (event.mask & IN_IGNORED) {
      // The kernel has removed the watch (its folder went): no owner may remove it again, and
      // the descriptor may be given to a new folder.
      for (const Subscriber subscriber : owners->second) {
        std::erase(subscriptions_.at(subscriber).watches, event.watch);
      }
      subscribers_of_watch_.erase(owners);
    }
  }
  if (overflow) {
    for (const auto& [subscriber, subscription] : subscriptions_) {
      deliveries[subscriber].overflow = true;
    }
  }
  for (auto& [subscriber, delivery] : deliveries) {
    const Subscription& subscription = subscriptions_.at(subscriber);
    boost::asio::post(subscription.executor,
                      [handler = subscription.handler, delivery = std::move(delivery)]() mutable {
                        handler(std::move(delivery));
                      });
  }
}

void InotifyHub::tell_everyone(const Delivery& delivery) {
  for (const auto& [subscriber, subscription] : subscriptions_) {
    boost::asio::post(subscription.executor,
                      [handler = subscription.handler, delivery] { handler(delivery); });
  }
}

}  // namespace rulestream
