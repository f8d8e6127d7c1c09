#pragma once

// The service's one inotify instance (sources/local/inotify_hub.hpp), read on a thread of its
// own: every local job's watcher adds its watches there, so that a thousand jobs cost one
// instance of the user's 128 (Linux's default fs.inotify.max_user_instances) and one thread,
// not one of each per job. The reading thread only parses records and posts them to each job's
// own io_context: a slow job never delays another's events.

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <thread>

namespace rulestream {

class InotifyHub;

// Not copyable; the destructor closes the instance and joins the thread. hub() may be shared
// with any thread; jobs still holding it after the destructor only find it closed (their
// watchers then rescan).
class SharedInotify {
 public:
  // When no instance can be had (the user's are used up), hub() is null and problem() says why:
  // each job's watcher then tries one of its own, and rescans without.
  SharedInotify();
  ~SharedInotify();
  SharedInotify(const SharedInotify&) = delete;
  SharedInotify& operator=(const SharedInotify&) = delete;

  const std::shared_ptr<InotifyHub>& hub() const { return hub_; }
  const std::string& problem() const { return problem_; }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::shared_ptr<InotifyHub> hub_;
  std::string problem_;
  std::thread thread_;  // last: runs io_ once everything above is
};

}  // namespace rulestream
