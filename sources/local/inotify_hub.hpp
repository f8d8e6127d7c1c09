#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "sources/local/inotify_events.hpp"

namespace rulestream {

// One inotify instance shared by many LocalWatchers. Linux gives a user 128 inotify instances
// by default (fs.inotify.max_user_instances) but many thousands of watches
// (fs.inotify.max_user_watches): `rulestream serve` follows hundreds of jobs with one instance
// and a few watches per job, where one instance per job would run out at the 128th.
//
// The hub reads its descriptor on the executor it was opened on and hands each watch's events
// to the subscriber that added the watch, posted to that subscriber's own executor (a watcher's
// strand), in the order the kernel reported them. A folder two subscribers watch is one watch
// (the kernel gives the same descriptor for the same folder): both get its events, and it is
// removed when the last of them lets it go. The kernel's queue overflowing (events of any watch
// lost) is told to every subscriber, and so is a failure to read, after which the hub is closed:
// every subscriber then follows by other means (LocalWatcher: rescanning).
//
// Thread-safe: every member function may be called from any thread. Handlers never run under
// the hub's lock nor inside a call to the hub: they are posted. A delivery already posted when
// unsubscribe() returns may still run: the handler must tell for itself that it is done.
class InotifyHub : public std::enable_shared_from_this<InotifyHub> {
 public:
  // What a subscriber is handed.
  struct Delivery {
    std::vector<InotifyEvent> events;  // of its watches, in the kernel's order
    bool overflow = false;             // events of any watch may have been lost
    std::string failure;               // set: the hub can no longer read; it is closed
  };
  using Handler = std::function<void(Delivery)>;
  using Subscriber = std::uint64_t;

  // Opens an inotify instance and reads it on `executor`. Throws StorageError with the reason
  // (EMFILE: the user's instances are used up) when it cannot.
  static std::shared_ptr<InotifyHub> open(boost::asio::any_io_executor executor);
  ~InotifyHub();
  InotifyHub(const InotifyHub&) = delete;
  InotifyHub& operator=(const InotifyHub&) = delete;

  // `handler` gets this subscriber's deliveries, posted to `executor`.
  Subscriber subscribe(boost::asio::any_io_executor executor, Handler handler);
  // Removes the subscriber's watches (each folder's watch goes when no other subscriber has it)
  // and its handler. Unknown subscribers are ignored.
  void unsubscribe(Subscriber subscriber);

  // Watches `path` for `mask` (the same mask for every subscriber of a folder: a second
  // inotify_add_watch on a folder replaces its mask). Returns the watch descriptor, or -errno
  // (ENOSPC: no watches left; EBADF: the hub is closed).
  int add_watch(Subscriber subscriber, const std::string& path, std::uint32_t mask);
  // The subscriber lets go of a watch it added; its later events are no longer handed to it.
  void remove_watch(Subscriber subscriber, int watch);

  // Stops reading and closes the descriptor (every watch goes with it), on the reading executor:
  // a hub that may outlive that executor's io_context must be closed while it still runs.
  // Idempotent.
  void close();

  // For tests and metrics: live subscribers and watch descriptors.
  std::size_t subscriber_count() const;
  std::size_t watch_count() const;

 private:
  struct Subscription {
    boost::asio::any_io_executor executor;
    Handler handler;
    std::vector<int> watches;
  };

  explicit InotifyHub(boost::asio::any_io_executor executor, int descriptor);
  void read();
  void on_read(const boost::system::error_code& error, std::size_t count);
  void dispatch(const std::vector<InotifyEvent>& events);
  // Posts to every subscriber (overflow, failure). Under mutex_.
  void tell_everyone(const Delivery& delivery);
  // Drops `subscriber` from `watch`'s list; removes the kernel's watch with the last. Under
  // mutex_.
  void release_watch(Subscriber subscriber, int watch);

  // Read and parsed on the reading executor only (one read in flight at a time). close()
  // destroys the descriptor there, so that a hub still held after its io_context is gone (by a
  // job's configuration, say) holds nothing of it.
  const boost::asio::any_io_executor executor_;
  std::optional<boost::asio::posix::stream_descriptor> descriptor_;
  std::vector<char> buffer_;
  std::size_t buffered_ = 0;  // bytes of an incomplete record at the front of buffer_

  mutable std::mutex mutex_;  // guards what follows, and the descriptor's watches
  bool closed_ = false;
  int native_ = -1;  // the inotify descriptor, for add/remove while a read is in flight
  Subscriber next_subscriber_ = 1;
  std::map<Subscriber, Subscription> subscriptions_;
  std::unordered_map<int, std::vector<Subscriber>> subscribers_of_watch_;
};

}  // namespace rulestream
