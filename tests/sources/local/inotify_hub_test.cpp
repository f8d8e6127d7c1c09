#include "sources/local/inotify_hub.hpp"

#include <gtest/gtest.h>
#include <sys/inotify.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::eventually;
using testing::TempDir;

constexpr std::uint32_t kMask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_ONLYDIR;

void touch(const fs::path& path) {
  std::ofstream(path) << "x";
}

// An io_context run on a thread of its own, as serve runs the hub's (and each job's).
class IoThread {
 public:
  IoThread() : work_(io_.get_executor()), thread_([this] { io_.run(); }) {}
  ~IoThread() {
    work_.reset();
    thread_.join();
  }
  boost::asio::io_context& io() { return io_; }
  bool on_this_thread() const { return std::this_thread::get_id() == thread_.get_id(); }

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::thread thread_;
};

// What a subscriber was handed, and whether every delivery ran on its own io thread.
class Received {
 public:
  explicit Received(const IoThread& thread) : thread_(thread) {}
  InotifyHub::Handler handler() {
    return [this](InotifyHub::Delivery delivery) {
      std::lock_guard lock(mutex_);
      if (!thread_.on_this_thread()) ++foreign_thread_;
      overflows_ += delivery.overflow ? 1 : 0;
      if (!delivery.failure.empty()) failure_ = delivery.failure;
      for (const auto& event : delivery.events) {
        if (event.mask & (IN_CLOSE_WRITE | IN_MOVED_TO)) names_.push_back(event.name);
      }
    };
  }
  std::vector<std::string> names() const {
    std::lock_guard lock(mutex_);
    return names_;
  }
  int overflows() const {
    std::lock_guard lock(mutex_);
    return overflows_;
  }
  int foreign_thread() const {
    std::lock_guard lock(mutex_);
    return foreign_thread_;
  }

 private:
  const IoThread& thread_;
  mutable std::mutex mutex_;
  std::vector<std::string> names_;
  int overflows_ = 0;
  int foreign_thread_ = 0;
  std::string failure_;
};

TEST(InotifyHub, HandsEachWatchsEventsToItsSubscriberOnItsOwnExecutor) {
  TempDir one;
  TempDir two;
  IoThread hub_thread;
  IoThread first_thread;
  IoThread second_thread;
  const auto hub = InotifyHub::open(hub_thread.io().get_executor());
  Received first(first_thread);
  Received second(second_thread);
  const auto a = hub->subscribe(first_thread.io().get_executor(), first.handler());
  const auto b = hub->subscribe(second_thread.io().get_executor(), second.handler());
  ASSERT_GE(hub->add_watch(a, one.path().string(), kMask), 0);
  ASSERT_GE(hub->add_watch(b, two.path().string(), kMask), 0);
  EXPECT_EQ(hub->watch_count(), 2u);

  for (const std::string name : {"a1", "a2", "a3"}) touch(one.path() / name);
  touch(two.path() / "b1");
  ASSERT_TRUE(eventually([&] { return first.names().size() == 3 && second.names().size() == 1; }));
  // In the order the files were closed, and none of the other folder's.
  EXPECT_EQ(first.names(), (std::vector<std::string>{"a1", "a2", "a3"}));
  EXPECT_EQ(second.names(), (std::vector<std::string>{"b1"}));
  EXPECT_EQ(first.foreign_thread() + second.foreign_thread(), 0);
  hub->close();
}

TEST(InotifyHub, AFolderTwoSubscribersWatchStaysWatchedUntilTheLastLetsGo) {
  TempDir folder;
  IoThread thread;
  const auto hub = InotifyHub::open(thread.io().get_executor());
  Received first(thread);
  Received second(thread);
  const auto a = hub->subscribe(thread.io().get_executor(), first.handler());
  const auto b = hub->subscribe(thread.io().get_executor(), second.handler());
  const int watch = hub->add_watch(a, folder.path().string(), kMask);
  ASSERT_GE(watch, 0);
  // The kernel gives the same descriptor for the same folder: one watch, two owners.
  EXPECT_EQ(hub->add_watch(b, folder.path().string(), kMask), watch);
  EXPECT_EQ(hub->watch_count(), 1u);

  touch(folder.path() / "both");
  ASSERT_TRUE(eventually([&] { return first.names().size() == 1 && second.names().size() == 1; }));

  hub->remove_watch(a, watch);
  EXPECT_EQ(hub->watch_count(), 1u);  // b still has it
  touch(folder.path() / "second-only");
  ASSERT_TRUE(eventually([&] { return second.names().size() == 2; }));
  EXPECT_EQ(second.names().back(), "second-only");

  hub->unsubscribe(b);
  EXPECT_EQ(hub->watch_count(), 0u);
  EXPECT_EQ(hub->subscriber_count(), 1u);
  touch(folder.path() / "nobody");
  // A marker through a folder still watched: once it arrives, "nobody" would have too.
  TempDir other;
  ASSERT_GE(hub->add_watch(a, other.path().string(), kMask), 0);
  touch(other.path() / "marker");
  ASSERT_TRUE(eventually([&] { return first.names().size() == 2; }));
  EXPECT_EQ(first.names(), (std::vector<std::string>{"both", "marker"}));
  EXPECT_EQ(second.names(), (std::vector<std::string>{"both", "second-only"}));
  hub->close();
}

TEST(InotifyHub, AClosedHubRefusesNewWatches) {
  TempDir folder;
  IoThread thread;
  const auto hub = InotifyHub::open(thread.io().get_executor());
  Received received(thread);
  const auto a = hub->subscribe(thread.io().get_executor(), received.handler());
  hub->close();
  EXPECT_EQ(hub->add_watch(a, folder.path().string(), kMask), -EBADF);
}

TEST(InotifyHub, TellsEverySubscriberWhenTheQueueOverflows) {
  std::ifstream limit("/proc/sys/fs/inotify/max_queued_events");
  std::size_t max_queued_events = 0;
  limit >> max_queued_events;
  if (max_queued_events == 0 || max_queued_events > 100'000) {
    GTEST_SKIP() << "cannot overflow an inotify queue of " << max_queued_events
                 << " events in a test";
  }
  TempDir busy;
  TempDir quiet;
  // The hub's io_context does not run while the queue fills: nothing reads it.
  boost::asio::io_context hub_io;
  IoThread subscribers;
  const auto hub = InotifyHub::open(hub_io.get_executor());
  Received first(subscribers);
  Received second(subscribers);
  const auto a = hub->subscribe(subscribers.io().get_executor(), first.handler());
  const auto b = hub->subscribe(subscribers.io().get_executor(), second.handler());
  ASSERT_GE(hub->add_watch(a, busy.path().string(), kMask), 0);
  ASSERT_GE(hub->add_watch(b, quiet.path().string(), kMask), 0);
  for (std::size_t i = 0; i <= max_queued_events / 2 + 1; ++i) {
    touch(busy.path() / std::to_string(i));  // IN_CREATE and IN_CLOSE_WRITE: two events each
  }
  // Reads until the overflow record has been handed on (or a while has passed), then stops.
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while ((first.overflows() == 0 || second.overflows() == 0) &&
         std::chrono::steady_clock::now() < deadline) {
    hub_io.run_for(10ms);
  }
  EXPECT_GE(first.overflows(), 1);
  EXPECT_GE(second.overflows(), 1);  // whose own folder lost nothing: it cannot know that
  EXPECT_TRUE(second.names().empty());
  hub->close();
  hub_io.run_for(50ms);  // the close, on the reading executor
}

}  // namespace
}  // namespace rulestream
