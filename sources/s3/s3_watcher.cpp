#include "sources/s3/s3_watcher.hpp"

#include <algorithm>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string_view>

#include "core/model/exceptions.hpp"
#include "core/model/trial_layout.hpp"
#include "sources/common/file_announcer.hpp"
#include "sources/common/readiness_tracker.hpp"

namespace rulestream {
namespace {

// Index keys of `step` all sort after this: "index/000000000/000000000012".
std::string index_step_cursor(std::int64_t step) {
  char digits[32];
  std::snprintf(digits, sizeof digits, "%012lld", static_cast<long long>(step));
  return index_bucket_path(step) + digits;
}

// A listing failure's text with every number as '#': what makes two failures the same problem.
// libcurl's texts carry timings ("Failed to connect ... after 5 ms"), which under load differ
// from one poll to the next; a watch should say an outage once, not once per timing.
std::string problem_kind(std::string_view text) {
  std::string kind;
  kind.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool digit = text[i] >= '0' && text[i] <= '9';
    if (!digit) {
      kind += text[i];
    } else if (i == 0 || text[i - 1] < '0' || text[i - 1] > '9') {
      kind += '#';
    }
  }
  return kind;
}

}  // namespace

// All members but `announcer_` and the counters are touched on `strand_` only.
class S3Watcher::Impl : public std::enable_shared_from_this<Impl> {
 public:
  Impl(boost::asio::io_context& io, std::shared_ptr<const S3Storage> storage, Options options,
       Callback on_files)
      : strand_(boost::asio::make_strand(io)),
        storage_(std::move(storage)),
        options_(options),
        announcer_(std::move(on_files)),
        timer_(strand_),
        tracker_(options.follow),
        index_cursor_(kIndexDir) {}

  void start() {
    if (started_.exchange(true)) throw std::logic_error("S3Watcher::start() called twice");
    boost::asio::dispatch(strand_, [self = shared_from_this()] { self->poll(); });
  }

  void stop() {
    if (strand_.running_in_this_thread()) {
      announcer_.close(false);
      timer_.cancel();
      return;
    }
    announcer_.close(true);  // waits for a callback in progress
    boost::asio::post(strand_, [self = shared_from_this()] { self->timer_.cancel(); });
  }

  std::size_t files_announced() const { return announcer_.announced(); }
  std::uint64_t list_requests() const { return list_requests_.load(); }
  std::uint64_t polls() const { return polls_.load(); }
  std::string current_problem() const {
    const std::lock_guard lock(problem_mutex_);
    return current_problem_;
  }

 private:
  void poll() {
    if (announcer_.closed()) return;
    ++polls_;
    std::vector<TrialFile> found;
    try {
      std::uint64_t requests = 0;
      const auto collections = storage_->list(kCollectionsDir, collections_cursor_, requests);
      const auto rest = storage_->list({}, index_cursor_, requests);
      list_requests_ += requests;
      // The cursor stops before the first file held back, so that it is listed again.
      bool holding = false;
      for (const auto& object : collections) {
        consider(object, found);
        holding = holding || held_.contains(object.path);
        if (!holding) collections_cursor_ = object.path;
      }
      for (const auto& object : rest) consider(object, found);
      advance_index_cursor(rest);
      last_problem_.clear();
      set_current_problem({});
    } catch (const StorageError& error) {
      if (!options_.follow) throw;  // a replay that cannot list must fail, not pass empty
      set_current_problem(storage_->describe() + ": " + error.what());
      if (std::string kind = problem_kind(error.what()); last_problem_ != kind) {
        last_problem_ = std::move(kind);
        std::cerr << "rulestream: cannot list " << storage_->describe() << ": " << error.what()
                  << "; will retry in " << options_.poll_interval.count() << " ms\n";
      }
    }
    if (options_.follow) schedule();
    deliver(std::move(found));
  }

  void set_current_problem(std::string problem) {
    const std::lock_guard lock(problem_mutex_);
    current_problem_ = std::move(problem);
  }

  void consider(const StoredObject& object, std::vector<TrialFile>& found) {
    const auto kind = trial_file_kind(object.path);
    if (!kind || tracker_.announced(object.path)) return;
    if (*kind == TrialFile::Kind::Index) {
      if (const auto name = parse_step_file_name(object.path)) {
        workers_.insert(name->worker);
        written_[name->step].insert(name->worker);
      }
    }
    const ReadinessTracker::Observation seen{.size = object.size,
                                             .modified_ns = object.modified_ns};
    if (!tracker_.scanned(object.path, *kind, seen)) {
      held_.insert(object.path);
      return;
    }
    held_.erase(object.path);
    found.push_back(TrialFile{.kind = *kind,
                              .path = object.path,
                              .size = object.size,
                              .modified_ns = object.modified_ns});
  }

  // Moves the cursor past steps every known worker has written (and past steps that a later
  // complete step overtook), but never past a file held back for another look.
  void advance_index_cursor(const std::vector<StoredObject>& listed) {
    std::optional<std::int64_t> last_complete;
    for (const auto& [step, workers] : written_) {
      if (workers.size() >= workers_.size()) last_complete = step;
    }
    std::optional<std::int64_t> first_open;
    for (auto it = written_.begin(); it != written_.end();) {
      const bool complete = it->second.size() >= workers_.size();
      const bool overtaken = last_complete && it->first < *last_complete;
      if (complete || overtaken) {
        it = written_.erase(it);
      } else {
        if (!first_open) first_open = it->first;
        ++it;
      }
    }
    for (const auto& path : held_) {
      if (const auto name = parse_step_file_name(path)) {
        first_open = first_open ? std::min(*first_open, name->step) : name->step;
      }
    }
    if (first_open) {
      index_cursor_ = std::max(std::string(kIndexDir), index_step_cursor(*first_open));
      return;
    }
    // Everything listed is settled: continue after the last index file (the end marker and
    // anything else after index/ is listed again, which costs nothing more than the LIST).
    for (const auto& object : listed) {
      if (object.path.starts_with(kIndexDir)) index_cursor_ = std::max(index_cursor_, object.path);
    }
  }

  void schedule() {
    timer_.expires_after(options_.poll_interval);
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code& error) {
      if (error || self->announcer_.closed()) return;
      self->poll();
    });
  }

  void deliver(std::vector<TrialFile> files) { announcer_.announce(std::move(files)); }

  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  const std::shared_ptr<const S3Storage> storage_;
  const Options options_;
  FileAnnouncer announcer_;
  boost::asio::steady_timer timer_;
  ReadinessTracker tracker_;
  std::string collections_cursor_;
  std::string index_cursor_;
  std::set<std::string> workers_;                          // every worker seen in index files
  std::map<std::int64_t, std::set<std::string>> written_;  // steps not yet settled: who wrote
  std::set<std::string> held_;                             // listed, not announced yet
  std::string last_problem_;  // problem_kind of the failure last said; empty after a success

  std::atomic<bool> started_{false};
  std::atomic<std::uint64_t> list_requests_{0};
  mutable std::mutex problem_mutex_;  // guards current_problem_ (asked from other threads)
  std::string current_problem_;
  std::atomic<std::uint64_t> polls_{0};
};

S3Watcher::S3Watcher(boost::asio::io_context& io, std::shared_ptr<const S3Storage> storage,
                     Options options, Callback on_files) {
  if (!storage) throw std::invalid_argument("S3Watcher: no storage");
  if (!on_files) throw std::invalid_argument("S3Watcher: no callback for " + storage->describe());
  if (options.follow && options.poll_interval <= std::chrono::milliseconds::zero()) {
    throw std::invalid_argument("S3Watcher: poll_interval must be positive (" +
                                std::to_string(options.poll_interval.count()) + " ms) for " +
                                storage->describe());
  }
  impl_ = std::make_shared<Impl>(io, std::move(storage), options, std::move(on_files));
}

S3Watcher::~S3Watcher() {
  impl_->stop();
}

void S3Watcher::start() {
  impl_->start();
}

void S3Watcher::stop() {
  impl_->stop();
}

std::size_t S3Watcher::files_announced() const {
  return impl_->files_announced();
}

std::string S3Watcher::current_problem() const {
  return impl_->current_problem();
}

std::uint64_t S3Watcher::list_requests() const {
  return impl_->list_requests();
}

std::uint64_t S3Watcher::polls() const {
  return impl_->polls();
}

}  // namespace rulestream
