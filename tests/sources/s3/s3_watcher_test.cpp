// S3Watcher against a real S3-compatible server: files announced once, in path order, the end
// marker last, a slow worker's files found, and what a poll costs in LIST requests.
#include "sources/s3/s3_watcher.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "core/model/exceptions.hpp"
#include "core/model/trial_layout.hpp"
#include "tests/support/s3_test_server.hpp"
#include "tests/support/tcp_proxy.hpp"

namespace rulestream {
namespace {

using testing::bytes_of;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

constexpr auto kPatience = std::chrono::seconds(20);

// Runs a watcher on its own io thread and keeps what it announced.
class Following {
 public:
  Following(std::shared_ptr<const S3Storage> storage, S3Watcher::Options options)
      : watcher_(io_, std::move(storage), options, [this](std::vector<TrialFile> files) {
          std::lock_guard lock(mutex_);
          for (auto& file : files) {
            sizes_[file.path] = file.size;
            announced_.push_back(std::move(file.path));
          }
          ++batches_;
          changed_.notify_all();
        }) {
    watcher_.start();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~Following() { finish(); }

  // Stops following and waits for a poll in progress to end, so that the counters hold still
  // and agree with each other.
  void finish() {
    if (!thread_.joinable()) return;
    watcher_.stop();
    io_.stop();
    thread_.join();
  }

  // Waits until `path` has been announced; false after kPatience.
  bool wait_for(const std::string& path) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kPatience, [&] {
      return std::find(announced_.begin(), announced_.end(), path) != announced_.end();
    });
  }
  // Waits until the watcher has polled `count` times; false after kPatience.
  bool wait_for_polls(std::uint64_t count) {
    const auto deadline = Clock::now() + kPatience;
    while (watcher_.polls() < count) {
      if (Clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
  }
  // Waits until the watcher has made `count` LIST requests; false after kPatience.
  bool wait_for_lists(std::uint64_t count) {
    const auto deadline = Clock::now() + kPatience;
    while (watcher_.list_requests() < count) {
      if (Clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return true;
  }
  std::vector<std::string> announced() {
    std::lock_guard lock(mutex_);
    return announced_;
  }
  // The size a file had when it was announced.
  std::uint64_t announced_size(const std::string& path) {
    std::lock_guard lock(mutex_);
    return sizes_.at(path);
  }
  S3Watcher& watcher() { return watcher_; }

 private:
  boost::asio::io_context io_;
  S3Watcher watcher_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> announced_;
  std::map<std::string, std::uint64_t> sizes_;
  int batches_ = 0;
  std::thread thread_;
};

class S3WatcherTest : public testing::S3ServerTest {
 protected:
  S3WatcherTest() : S3ServerTest("watch") {}

  void SetUp() override {
    S3ServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    storage_ = std::make_shared<S3Storage>(parse_s3_uri("s3://" + bucket_ + "/job"), client_);
  }

  void put(const std::string& path) const { client_->put(bucket_, "job/" + path, bytes_of("{}")); }

  // A step as smdebug writes it: the event file, then its index file.
  void write_step(std::int64_t step, const std::string& worker) const {
    put(event_file_path(step, worker));
    put(index_file_path(step, worker));
  }

  std::shared_ptr<S3Storage> storage_;
};

TEST_F(S3WatcherTest, AnnouncesEachFileOnceInPathOrderWithTheEndMarkerLast) {
  put(collections_file_path("worker_0"));
  write_step(0, "worker_0");
  Following following(storage_, {.follow = true, .poll_interval = std::chrono::milliseconds(50)});
  ASSERT_TRUE(following.wait_for(index_file_path(0, "worker_0")));
  for (std::int64_t step = 1; step < 5; ++step) {
    write_step(step, "worker_0");
    ASSERT_TRUE(following.wait_for(index_file_path(step, "worker_0")));
  }
  write_step(5, "worker_0");
  put(std::string(kEndOfJobMarker));
  ASSERT_TRUE(following.wait_for(std::string(kEndOfJobMarker)));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // polls that find nothing new
  // Counted once the watcher is still: a poll in progress has been counted but has not yet
  // added its LIST requests.
  following.finish();

  std::vector<std::string> expected = {collections_file_path("worker_0")};
  for (std::int64_t step = 0; step < 6; ++step) {
    expected.push_back(index_file_path(step, "worker_0"));
  }
  expected.push_back(std::string(kEndOfJobMarker));
  EXPECT_EQ(following.announced(), expected);  // sorted, once each, no event files
  EXPECT_EQ(following.watcher().files_announced(), expected.size());
  // Two LISTs a poll (collections/, and index/ with the end marker), however many files.
  const auto polls = following.watcher().polls();
  EXPECT_GE(polls, 7u);
  EXPECT_EQ(following.watcher().list_requests(), 2 * polls);
}

TEST_F(S3WatcherTest, ASlowWorkersIndexFileIsFoundAfterAFasterWorkersNewerOnes) {
  put(collections_file_path("worker_0"));
  put(collections_file_path("worker_1"));
  write_step(0, "worker_0");
  write_step(0, "worker_1");
  Following following(storage_, {.follow = true, .poll_interval = std::chrono::milliseconds(50)});
  ASSERT_TRUE(following.wait_for(index_file_path(0, "worker_1")));
  for (std::int64_t step = 1; step < 4; ++step) write_step(step, "worker_0");
  ASSERT_TRUE(following.wait_for(index_file_path(3, "worker_0")));
  // worker_1's step 1 sorts before worker_0's step 3, which the watcher has seen.
  write_step(1, "worker_1");
  EXPECT_TRUE(following.wait_for(index_file_path(1, "worker_1")));
  write_step(2, "worker_1");
  write_step(3, "worker_1");
  EXPECT_TRUE(following.wait_for(index_file_path(3, "worker_1")));
  auto announced = following.announced();
  std::sort(announced.begin(), announced.end());
  EXPECT_EQ(std::adjacent_find(announced.begin(), announced.end()), announced.end());
  EXPECT_EQ(announced.size(), 2u + 8u);
}

TEST_F(S3WatcherTest, AnEmptyFileHeldBackIsListedAgainAndAnnouncedOnceItHoldsStill) {
  // Live, an empty index file must be seen unchanged by two polls (ReadinessTracker): the cursor
  // must not pass it, or no later poll would see it again.
  put(collections_file_path("worker_0"));
  client_->put(bucket_, "job/" + index_file_path(0, "worker_0"), {});
  Following following(storage_, {.follow = true, .poll_interval = std::chrono::milliseconds(50)});
  EXPECT_TRUE(following.wait_for(index_file_path(0, "worker_0")));
  EXPECT_GE(following.watcher().polls(), 2u);
}

TEST_F(S3WatcherTest, AnObjectReplacedWhileHeldBackIsAnnouncedOnceWithItsFinalContent) {
  // Listed empty (its writer has not uploaded it yet), then replaced by its content: like a
  // local file written in place, it is announced once it holds still, as it is then.
  put(collections_file_path("worker_0"));
  const std::string index = index_file_path(0, "worker_0");
  client_->put(bucket_, "job/" + index, {});
  Following following(storage_, {.follow = true, .poll_interval = std::chrono::milliseconds(1000)});
  ASSERT_TRUE(following.wait_for_lists(2));  // the first poll saw it empty
  const std::string content = "{\"meta\": {}}";
  client_->put(bucket_, "job/" + index, bytes_of(content));
  ASSERT_TRUE(following.wait_for(index));
  EXPECT_EQ(following.announced_size(index), content.size());
  EXPECT_GE(following.watcher().polls(), 3u);  // seen changed, then seen unchanged
  write_step(1, "worker_0");
  ASSERT_TRUE(following.wait_for(index_file_path(1, "worker_0")));
  following.finish();
  EXPECT_EQ(following.announced(),
            (std::vector<std::string>{collections_file_path("worker_0"), index,
                                      index_file_path(1, "worker_0")}));
}

TEST_F(S3WatcherTest, AnObjectReplacedAfterItWasAnnouncedIsNotAnnouncedAgain) {
  // The same key with new content (a new ETag, size and time): smdebug never rewrites a file,
  // so, as for a local file rewritten in place, the step is not delivered twice. worker_1 has
  // not written step 1 yet, so the index cursor stays before it and every poll lists the
  // replaced object again.
  put(collections_file_path("worker_0"));
  put(collections_file_path("worker_1"));
  write_step(0, "worker_0");
  write_step(0, "worker_1");
  write_step(1, "worker_0");
  Following following(storage_, {.follow = true, .poll_interval = std::chrono::milliseconds(50)});
  const std::string replaced = index_file_path(1, "worker_0");
  ASSERT_TRUE(following.wait_for(replaced));
  client_->put(bucket_, "job/" + replaced, bytes_of("{\"meta\": {\"replaced\": true}}"));
  const auto lists = following.watcher().list_requests();
  ASSERT_TRUE(following.wait_for_lists(lists + 6));  // three polls that list the new content
  write_step(1, "worker_1");
  put(std::string(kEndOfJobMarker));
  ASSERT_TRUE(following.wait_for(std::string(kEndOfJobMarker)));
  following.finish();
  EXPECT_EQ(following.announced(),
            (std::vector<std::string>{
                collections_file_path("worker_0"), collections_file_path("worker_1"),
                index_file_path(0, "worker_0"), index_file_path(0, "worker_1"), replaced,
                index_file_path(1, "worker_1"), std::string(kEndOfJobMarker)}));
}

TEST_F(S3WatcherTest, AListingOfMoreThanAThousandFilesFollowsItsContinuation) {
  put(collections_file_path("worker_0"));
  constexpr std::int64_t kSteps = 1001;
  {
    std::vector<std::thread> uploaders;
    for (std::int64_t first = 0; first < 8; ++first) {
      uploaders.emplace_back([this, first] {
        for (std::int64_t step = first; step < kSteps; step += 8) {
          put(index_file_path(step, "worker_0"));
        }
      });
    }
    for (auto& uploader : uploaders) uploader.join();
  }
  put(std::string(kEndOfJobMarker));
  boost::asio::io_context io;
  std::vector<std::string> announced;
  S3Watcher replay(io, storage_, {.follow = false}, [&](std::vector<TrialFile> files) {
    for (auto& file : files) announced.push_back(file.path);
  });
  replay.start();
  io.run();
  ASSERT_EQ(announced.size(), static_cast<std::size_t>(kSteps) + 2);
  EXPECT_TRUE(std::is_sorted(announced.begin(), announced.end()));
  EXPECT_EQ(announced[1], index_file_path(0, "worker_0"));
  EXPECT_EQ(announced[kSteps], index_file_path(kSteps - 1, "worker_0"));
  EXPECT_EQ(announced.back(), kEndOfJobMarker);
  // collections/ in one page; after index/, 1001 index files and the end marker in two.
  EXPECT_EQ(replay.list_requests(), 3u);
}

TEST_F(S3WatcherTest, ALiveWatchRidesOutAServerOutageWithoutALinePerPoll) {
  testing::TcpProxy proxy(server_->port());
  S3ClientOptions options;
  options.max_attempts = 1;  // every poll in the outage fails, fast
  const auto through_proxy = std::make_shared<S3Storage>(
      parse_s3_uri("s3://" + bucket_ + "/job"), server_->client_via(proxy.endpoint(), options));
  put(collections_file_path("worker_0"));
  write_step(0, "worker_0");
  ::testing::internal::CaptureStderr();
  std::vector<std::string> announced;
  std::uint64_t polls_in_outage = 0;
  {
    Following following(through_proxy,
                        {.follow = true, .poll_interval = std::chrono::milliseconds(50)});
    EXPECT_TRUE(following.wait_for(index_file_path(0, "worker_0")));
    proxy.go_down();
    write_step(1, "worker_0");  // straight to the server: the job goes on
    const auto polls = following.watcher().polls();
    EXPECT_TRUE(following.wait_for_polls(polls + 5));
    polls_in_outage = following.watcher().polls() - polls;
    proxy.come_up();
    EXPECT_TRUE(following.wait_for(index_file_path(1, "worker_0")));
    following.finish();
    announced = following.announced();
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(announced, (std::vector<std::string>{collections_file_path("worker_0"),
                                                 index_file_path(0, "worker_0"),
                                                 index_file_path(1, "worker_0")}));
  // Said, naming the trial, but not once per failed poll (a dropped kept-alive connection and
  // a refused one may read differently: at most two lines).
  std::size_t lines = 0;
  for (std::size_t at = err.find("cannot list"); at != std::string::npos;
       at = err.find("cannot list", at + 1)) {
    ++lines;
  }
  EXPECT_GE(lines, 1u) << err;
  EXPECT_LE(lines, 2u) << err;
  EXPECT_GE(polls_in_outage, 5u);
  EXPECT_THAT(err, HasSubstr("rulestream: cannot list s3://" + bucket_ + "/job"));
}

TEST_F(S3WatcherTest, AReplayListsOnceAndFailsLoudlyWhenItCannotList) {
  put(collections_file_path("worker_0"));
  for (std::int64_t step = 0; step < 3; ++step) write_step(step, "worker_0");
  put(std::string(kEndOfJobMarker));
  boost::asio::io_context io;
  std::vector<std::string> announced;
  S3Watcher replay(io, storage_, {.follow = false}, [&](std::vector<TrialFile> files) {
    for (auto& file : files) announced.push_back(file.path);
  });
  replay.start();
  io.run();
  EXPECT_EQ(announced.size(), 5u);
  EXPECT_EQ(announced.back(), kEndOfJobMarker);
  EXPECT_EQ(replay.polls(), 1u);

  const auto missing = std::make_shared<S3Storage>(
      parse_s3_uri("s3://" + server_->new_bucket("absent") + "/job"), client_);
  boost::asio::io_context other_io;
  S3Watcher failing(other_io, missing, {.follow = false}, [](std::vector<TrialFile>) {});
  failing.start();
  try {
    other_io.run();
    ADD_FAILURE() << "no error";
  } catch (const StorageError& error) {
    EXPECT_THAT(error.what(), HasSubstr("no such bucket"));
  }
}

}  // namespace
}  // namespace rulestream
