#include "sources/local/local_watcher.hpp"

#include <dirent.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <cerrno>
#include <iostream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/model/exceptions.hpp"
#include "sources/common/file_announcer.hpp"
#include "sources/common/readiness_tracker.hpp"
#include "sources/local/inotify_events.hpp"
#include "sources/local/inotify_hub.hpp"

namespace rulestream {
namespace {

// Folders report files closed after writing, renamed in or out, created (files being written
// in place, and new folders), and their own removal (IN_IGNORED follows it unasked); for files
// that grow in place, each write too.
constexpr std::uint32_t kFolderEvents =
    IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE_SELF | IN_ONLYDIR;
constexpr std::uint32_t kGrowthEvents = kFolderEvents | IN_MODIFY;

std::string error_text(int error) {
  return std::generic_category().message(error);
}

bool is_absent(int error) {
  return error == ENOENT || error == ENOTDIR;
}

}  // namespace

// All members but `announcer_` and those start() sets before the strand runs (hub_, owns_hub_,
// subscriber_) are touched on `strand_` only.
class LocalWatcher::Impl : public std::enable_shared_from_this<Impl> {
 public:
  Impl(boost::asio::io_context& io, std::filesystem::path root, Options options, Callback on_files)
      : strand_(boost::asio::make_strand(io)),
        root_(root.string()),
        options_(options),
        announcer_(std::move(on_files)),
        rescan_timer_(strand_),
        // Rescans are rescan_interval apart; a folder's first listing may come right after the
        // initial scan, and must not count as the second look at a file being written.
        tracker_(options.follow, options.rescan_interval / 2) {}

  void start() {
    if (started_.exchange(true)) throw std::logic_error("LocalWatcher::start() called twice");
    if (options_.follow) open_inotify();
    boost::asio::dispatch(strand_, [self = shared_from_this()] { self->begin(); });
  }

  void stop() {
    if (strand_.running_in_this_thread()) {
      announcer_.close(false);
      shut_down();
      return;
    }
    announcer_.close(true);  // waits for a callback in progress
    // Let go of the hub here and now: the strand may never run again (a pipeline's io_context
    // that has returned), and a shared hub must not keep this watcher's watches, nor its
    // executor past its io_context.
    unsubscribe();
    boost::asio::post(strand_, [self = shared_from_this()] { self->shut_down(); });
  }

  std::size_t files_announced() const { return announcer_.announced(); }

 private:
  enum class Trigger { Scan, Finished };

  void begin() {
    if (announcer_.closed()) return;
    std::vector<TrialFile> found;
    cover("", found);
    if (options_.follow) schedule_rescan();
    deliver(std::move(found));
  }

  void shut_down() {
    rescan_timer_.cancel();
    let_go_of_inotify();
  }

  // The shared hub when given one (serve), else an instance of the watcher's own, read on its
  // strand. Subscribed either way: one code path follows both. On start()'s thread, before the
  // strand runs anything of the watcher's: hub_ and subscriber_ never change after.
  void open_inotify() {
    std::shared_ptr<InotifyHub> hub = options_.inotify_hub;
    owns_hub_ = !hub;
    if (owns_hub_) {
      try {
        hub = InotifyHub::open(strand_);
      } catch (const StorageError& error) {
        report_polling(error.what());
        return;
      }
    }
    subscriber_ = hub->subscribe(strand_, [weak = weak_from_this()](InotifyHub::Delivery delivery) {
      if (const auto self = weak.lock()) self->on_delivery(std::move(delivery));
    });
    hub_ = std::move(hub);
    watching_ = true;
  }

  bool watching() const { return watching_; }

  // Removes its watches (a shared hub's other subscribers keep theirs) and closes an own hub.
  // From any thread, any number of times: the hub's calls are thread-safe and idempotent.
  void unsubscribe() {
    if (!hub_) return;
    hub_->unsubscribe(subscriber_);
    if (owns_hub_) hub_->close();
  }

  void let_go_of_inotify() {
    if (!watching_) return;
    watching_ = false;
    unsubscribe();
    folder_of_watch_.clear();
    watch_of_folder_.clear();
  }

  // Gives up on inotify for good; the rescan timer carries on alone. A watcher stopped from
  // another thread has been unsubscribed already: its watches are refused, silently.
  void fall_back_to_polling(const std::string& reason) {
    if (!watching() || announcer_.closed()) return;
    report_polling(reason);
    let_go_of_inotify();
    schedule_rescan();  // at rescan_interval now: the wait set while watching may be longer
  }

  void report_polling(const std::string& reason) const {
    std::cerr << "rulestream: " << reason << "; following " << root_ << " by rescanning every "
              << options_.rescan_interval.count() << " ms instead\n";
  }

  std::string full_path(std::string_view relative) const {
    std::string full = root_;
    if (!full.empty() && full.back() != '/' && !relative.empty()) full += '/';
    full += relative;
    return full;
  }

  // Watches `folder` ("" for the root, else "index/.../" with its '/'), then lists it: the
  // watch comes first so that nothing created meanwhile is missed (a file both listed and
  // reported is announced once). Recurses into followed subfolders.
  void cover(const std::string& folder, std::vector<TrialFile>& found) {
    add_watch(folder);
    const std::string directory = full_path(folder);
    DIR* listing = ::opendir(directory.c_str());
    if (listing == nullptr) {
      const int error = errno;
      // A folder below the root may vanish between an event and its listing; the root itself
      // vanishing is worth a word.
      if (!is_absent(error) || folder.empty()) report_listing_problem(directory, error);
      return;
    }
    listing_problems_.erase(directory);
    std::vector<std::string> subfolders;
    std::vector<std::string> files;
    errno = 0;
    while (const dirent* entry = ::readdir(listing)) {
      const std::string_view name = entry->d_name;
      if (name == "." || name == "..") continue;
      std::string path = folder + std::string(name);
      // d_type can be DT_UNKNOWN on some filesystems: then lstat says what it is.
      bool is_folder = entry->d_type == DT_DIR;
      if (entry->d_type == DT_UNKNOWN) {
        struct stat status {};
        is_folder = ::lstat(full_path(path).c_str(), &status) == 0 && S_ISDIR(status.st_mode);
      }
      if (is_folder) {
        if (options_.filter.follows_folder(path)) subfolders.push_back(path + '/');
      } else {
        files.push_back(std::move(path));
      }
    }
    const int read_error = errno;
    ::closedir(listing);
    if (read_error != 0 && !is_absent(read_error)) report_listing_problem(directory, read_error);
    for (const auto& path : files) consider(path, Trigger::Scan, found);
    for (const auto& subfolder : subfolders) cover(subfolder, found);
  }

  // Once per folder until it can be listed again: a rescan every few seconds must not flood
  // stderr.
  void report_listing_problem(const std::string& directory, int error) {
    if (!listing_problems_.insert(directory).second) return;
    std::cerr << "rulestream: cannot list " << directory << ": " << error_text(error)
              << "; will retry\n";
  }

  void add_watch(const std::string& folder) {
    if (!watching()) return;
    const std::string directory = full_path(folder);
    const int watch = hub_->add_watch(
        subscriber_, directory, options_.filter.announces_growth ? kGrowthEvents : kFolderEvents);
    if (watch < 0) {
      const int error = -watch;
      if (is_absent(error)) return;  // removed since it was seen
      fall_back_to_polling("cannot watch " + directory + " with inotify: " + error_text(error));
      return;
    }
    // The same folder under another name (moved): the new name wins.
    forget_watch(watch);
    folder_of_watch_[watch] = folder;
    watch_of_folder_[folder] = watch;
  }

  // A folder removed and created again has a new watch by the time the old one's IN_IGNORED
  // arrives: only the old watch's entries go.
  void forget_watch(int watch) {
    const auto folder = folder_of_watch_.find(watch);
    if (folder == folder_of_watch_.end()) return;
    if (const auto named = watch_of_folder_.find(folder->second);
        named != watch_of_folder_.end() && named->second == watch) {
      watch_of_folder_.erase(named);
    }
    folder_of_watch_.erase(folder);
  }

  // A folder moved away: its watches would report under a name that no longer exists.
  void forget_watches_under(const std::string& folder) {
    auto it = watch_of_folder_.lower_bound(folder);
    while (it != watch_of_folder_.end() && it->first.starts_with(folder)) {
      hub_->remove_watch(subscriber_, it->second);
      folder_of_watch_.erase(it->second);
      it = watch_of_folder_.erase(it);
    }
  }

  void consider(const std::string& path, Trigger trigger, std::vector<TrialFile>& found) {
    const auto kind = options_.filter.kind_of(path);
    if (!kind) return;
    if (options_.filter.announces_growth) {
      consider_growth(path, *kind, found);
      return;
    }
    if (tracker_.announced(path)) return;
    struct stat status {};
    if (::stat(full_path(path).c_str(), &status) != 0 || !S_ISREG(status.st_mode)) return;
    const ReadinessTracker::Observation seen = observation_of(status);
    const bool ready = trigger == Trigger::Finished
                           ? tracker_.finished(path)
                           : tracker_.scanned(path, *kind, seen, ReadinessTracker::Clock::now());
    if (!ready) return;
    found.push_back(TrialFile{.kind = *kind,
                              .path = path,
                              .size = seen.size,
                              .modified_ns = seen.modified_ns,
                              .identity = static_cast<std::uint64_t>(status.st_ino)});
  }

  static ReadinessTracker::Observation observation_of(const struct stat& status) {
    return {.size = static_cast<std::uint64_t>(status.st_size),
            .modified_ns = static_cast<std::int64_t>(status.st_mtim.tv_sec) * 1'000'000'000 +
                           status.st_mtim.tv_nsec};
  }

  // A file that grows in place: announced when it holds something it did not when last
  // announced (a size that changed: grown, or cut), or is another file (renamed over it, even
  // one of the same size).
  void consider_growth(const std::string& path, TrialFile::Kind kind,
                       std::vector<TrialFile>& found) {
    struct stat status {};
    if (::stat(full_path(path).c_str(), &status) != 0 || !S_ISREG(status.st_mode)) return;
    const ReadinessTracker::Observation seen = observation_of(status);
    const auto identity = static_cast<std::uint64_t>(status.st_ino);
    const auto [announced, added] =
        announced_files_.try_emplace(path, AnnouncedFile{seen.size, identity});
    if (added ? seen.size == 0
              : announced->second.size == seen.size && announced->second.identity == identity) {
      return;
    }
    announced->second = {seen.size, identity};
    found.push_back(TrialFile{.kind = kind,
                              .path = path,
                              .size = seen.size,
                              .modified_ns = seen.modified_ns,
                              .identity = identity});
  }

  void on_delivery(InotifyHub::Delivery delivery) {
    if (announcer_.closed() || !watching()) return;
    std::vector<TrialFile> found;
    if (!delivery.failure.empty()) {
      fall_back_to_polling(delivery.failure);
      cover("", found);  // what the lost events said
      deliver(std::move(found));
      return;
    }
    for (const auto& event : delivery.events) handle(event, found);
    // Growth events name a file as often as it was written to: each is looked at once.
    for (const std::string& path : written_) consider(path, Trigger::Finished, found);
    written_.clear();
    // An overflow lost events of any folder; after a fall back to polling, the events were
    // dropped with the watches.
    if (delivery.overflow || !watching()) cover("", found);
    deliver(std::move(found));
  }

  void handle(const InotifyEvent& event, std::vector<TrialFile>& found) {
    if (event.mask & IN_IGNORED) {
      forget_watch(event.watch);  // its folder was removed (or forget_watches_under let it go)
      return;
    }
    const auto watched = folder_of_watch_.find(event.watch);
    if (watched == folder_of_watch_.end() || event.name.empty()) return;
    // A copy: cover() below adds watches, which may rehash the map.
    const std::string path = watched->second + event.name;
    if (event.mask & IN_ISDIR) {
      if (!options_.filter.follows_folder(path)) return;
      if (event.mask & (IN_CREATE | IN_MOVED_TO)) {
        // Files may have landed in it before its watch existed: cover() lists it after.
        cover(path + '/', found);
      } else if (event.mask & IN_MOVED_FROM) {
        forget_watches_under(path + '/');
      }
      return;
    }
    if (options_.filter.announces_growth) {
      if (event.mask & (IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO)) written_.insert(path);
      return;
    }
    if (event.mask & IN_CREATE) {
      if (options_.filter.kind_of(path)) tracker_.created(path);
    } else if (event.mask & (IN_CLOSE_WRITE | IN_MOVED_TO)) {
      consider(path, Trigger::Finished, found);
    }
  }

  void schedule_rescan() {
    rescan_timer_.expires_after(watching() && options_.rescan_while_watching
                                    ? *options_.rescan_while_watching
                                    : options_.rescan_interval);
    rescan_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& error) {
      if (error || self->announcer_.closed()) return;
      self->rescan();
    });
  }

  void rescan() {
    std::vector<TrialFile> found;
    cover("", found);
    schedule_rescan();
    deliver(std::move(found));
  }

  void deliver(std::vector<TrialFile> files) { announcer_.announce(std::move(files)); }

  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  const std::string root_;
  const Options options_;
  FileAnnouncer announcer_;
  boost::asio::steady_timer rescan_timer_;
  ReadinessTracker tracker_;
  // Set by start() and never changed: null when not following or no inotify could be had.
  std::shared_ptr<InotifyHub> hub_;
  bool owns_hub_ = false;
  InotifyHub::Subscriber subscriber_ = 0;
  bool watching_ = false;  // following with inotify (still); on the strand after start()
  std::unordered_map<int, std::string> folder_of_watch_;
  std::map<std::string, int> watch_of_folder_;  // ordered: a moved folder's subtree is a range
  std::unordered_set<std::string> listing_problems_;
  // A filter whose files grow: what each file was when last announced.
  struct AnnouncedFile {
    std::uint64_t size = 0;
    std::uint64_t identity = 0;
  };
  std::unordered_map<std::string, AnnouncedFile> announced_files_;
  // The files written to in the delivery being handled (std::set: looked at in path order).
  std::set<std::string> written_;

  std::atomic<bool> started_{false};
};

LocalWatcher::LocalWatcher(boost::asio::io_context& io, std::filesystem::path root, Options options,
                           Callback on_files) {
  if (!on_files) throw std::invalid_argument("LocalWatcher: no callback for " + root.string());
  if (options.follow && options.rescan_interval <= std::chrono::milliseconds::zero()) {
    throw std::invalid_argument("LocalWatcher: rescan_interval must be positive (" +
                                std::to_string(options.rescan_interval.count()) + " ms) for " +
                                root.string());
  }
  // Readable: opening it for listing is the test that counts.
  DIR* listing = ::opendir(root.c_str());
  if (listing == nullptr) {
    throw StorageError("cannot watch trial folder " + root.string() + ": " + error_text(errno));
  }
  ::closedir(listing);
  impl_ = std::make_shared<Impl>(io, std::move(root), options, std::move(on_files));
}

LocalWatcher::~LocalWatcher() {
  impl_->stop();
}

void LocalWatcher::start() {
  impl_->start();
}

void LocalWatcher::stop() {
  impl_->stop();
}

std::size_t LocalWatcher::files_announced() const {
  return impl_->files_announced();
}

}  // namespace rulestream
