#include "sources/local/local_watcher.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/model/exceptions.hpp"
#include "core/model/trial_layout.hpp"
#include "sources/local/inotify_hub.hpp"
#include "stages/format/trial_writer.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::ElementsAreArray;
using testing::eventually;
using ::testing::HasSubstr;
using testing::TempDir;
using testing::write_text_file;

// Long enough that no periodic rescan runs during a test: what is found, inotify found.
constexpr std::chrono::milliseconds kNoRescan = std::chrono::hours(1);

void write_step(const fs::path& root, std::int64_t step, const std::string& worker,
                bool atomic_rename = true) {
  TrialWriter writer({.root = root, .worker = worker, .atomic_rename = atomic_rename});
  writer.begin_step(step, Mode::Train, step);
  writer.add_tensor("MLP_fc1.bias",
                    TensorValue::from_values(DType::Float32, {2}, std::vector<float>{1.5f, -2.0f}));
  writer.end_step();
}

void write_collections(const fs::path& root, const std::string& worker) {
  TrialWriter writer({.root = root, .worker = worker});
  writer.write_collections(CollectionsFile{.collections = {}, .num_workers = 2});
}

void write_end_marker(const fs::path& root) {
  TrialWriter({.root = root}).write_end_marker();
}

std::int64_t modified_ns(const fs::path& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0) return -1;
  return static_cast<std::int64_t>(status.st_mtim.tv_sec) * 1'000'000'000 + status.st_mtim.tv_nsec;
}

// What the watcher announced, read from the test thread while the io thread adds to it.
class Announcements {
 public:
  LocalWatcher::Callback callback() {
    return [this](std::vector<TrialFile> files) {
      {
        std::lock_guard lock(mutex_);
        batches_.push_back(std::move(files));
      }
      if (after_each_) after_each_();
    };
  }
  // Runs on the io thread after each callback (set before the watcher starts).
  void set_after_each(std::function<void()> action) { after_each_ = std::move(action); }

  std::vector<std::vector<TrialFile>> batches() const {
    std::lock_guard lock(mutex_);
    return batches_;
  }
  std::vector<TrialFile> files() const {
    std::lock_guard lock(mutex_);
    std::vector<TrialFile> all;
    for (const auto& batch : batches_) all.insert(all.end(), batch.begin(), batch.end());
    return all;
  }
  std::vector<std::string> paths() const {
    std::vector<std::string> all;
    for (const auto& file : files()) all.push_back(file.path);
    return all;
  }
  std::size_t count() const { return files().size(); }
  bool has(const std::string& path) const {
    const auto all = paths();
    return std::find(all.begin(), all.end(), path) != all.end();
  }
  // Every path announced at most once.
  std::vector<std::string> duplicates() const {
    std::map<std::string, int> times;
    for (const auto& path : paths()) ++times[path];
    std::vector<std::string> twice;
    for (const auto& [path, n] : times) {
      if (n > 1) twice.push_back(path);
    }
    return twice;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::vector<TrialFile>> batches_;
  std::function<void()> after_each_;
};

// A watcher with its io_context on a thread of its own, torn down in the right order even when
// an assertion returns early. The io_context has no work guard: once the watcher stops,
// run() returns by itself.
class WatcherOnThread {
 public:
  WatcherOnThread(const fs::path& root, LocalWatcher::Options options)
      : watcher_(io_, root, options, announcements_.callback()) {}
  ~WatcherOnThread() {
    watcher_.stop();
    if (!eventually([this] { return finished_.load(); }, 10s)) io_.stop();
    if (thread_.joinable()) thread_.join();
  }

  void start() {
    watcher_.start();
    run();
  }
  // Runs the io_context on the thread (again, after a run on the test thread).
  void run() {
    io_.restart();
    thread_ = std::thread([this] {
      io_.run();
      finished_ = true;
    });
  }
  // Keeps the io thread busy until the returned promise is set: inotify events pile up.
  std::promise<void> block_io_thread() {
    std::promise<void> release;
    auto blocked = std::make_shared<std::promise<void>>();
    auto is_blocked = blocked->get_future();
    auto released = std::make_shared<std::shared_future<void>>(release.get_future().share());
    boost::asio::post(io_, [blocked, released] {
      blocked->set_value();
      released->wait();
    });
    is_blocked.wait();
    return release;
  }

  boost::asio::io_context& io() { return io_; }
  LocalWatcher& watcher() { return watcher_; }
  Announcements& seen() { return announcements_; }
  bool io_finished() const { return finished_; }

 private:
  Announcements announcements_;
  boost::asio::io_context io_;
  LocalWatcher watcher_;
  std::thread thread_;
  std::atomic<bool> finished_{false};
};

LocalWatcher::Options following(std::chrono::milliseconds rescan_interval = kNoRescan) {
  return {.follow = true, .rescan_interval = rescan_interval};
}

// A finished two-worker trial with the noise smdebug leaves around it.
void write_finished_trial(const fs::path& root) {
  for (const std::string worker : {"worker_0", "worker_1"}) {
    write_step(root, 0, worker);
    write_step(root, 5, worker);
    write_collections(root, worker);
  }
  write_step(root, 1000, "worker_0");
  write_end_marker(root);
  write_text_file(root / "index/000000000/000000000010_worker_0.json.tmp", "{\"meta\"");
  write_text_file(root / "collections/000000000/worker_2_collections.json.tmp", "{");
  write_text_file(root / "index/000000000/000000000007_worker_0.csv", "tensor,value\n");
  write_text_file(root / "index/000000000/README", "notes");
  write_text_file(root / "claim.smd", "");
  write_text_file(root / "notes.txt", "by hand");
}

const std::vector<std::string> kFinishedTrialFiles = {
    "collections/000000000/worker_0_collections.json",
    "collections/000000000/worker_1_collections.json",
    "index/000000000/000000000000_worker_0.json",
    "index/000000000/000000000000_worker_1.json",
    "index/000000000/000000000005_worker_0.json",
    "index/000000000/000000000005_worker_1.json",
    "index/000000000/000000000007_worker_0.csv",
    "index/000000001/000000001000_worker_0.json",
    "training_job_end.ts",
};

TEST(LocalWatcher, InitialScanAnnouncesTrialFilesInPathOrderAndNothingElse) {
  TempDir dir;
  write_finished_trial(dir.path());
  boost::asio::io_context io;
  Announcements seen;
  LocalWatcher watcher(io, dir.path(), {.follow = false}, seen.callback());
  watcher.start();
  io.run();  // returns: without follow, the scan is all there is to do

  const auto batches = seen.batches();
  ASSERT_EQ(batches.size(), 1u);
  std::vector<std::string> paths;
  for (const auto& file : batches[0]) {
    paths.push_back(file.path);
    const fs::path full = dir.path() / file.path;
    EXPECT_EQ(file.size, fs::file_size(full)) << file.path;
    EXPECT_EQ(file.modified_ns, modified_ns(full)) << file.path;
    EXPECT_EQ(file.kind, *trial_file_kind(file.path)) << file.path;
  }
  EXPECT_THAT(paths, ElementsAreArray(kFinishedTrialFiles));
  EXPECT_EQ(batches[0].back().kind, TrialFile::Kind::EndMarker);
  EXPECT_EQ(batches[0].front().kind, TrialFile::Kind::Collections);
  EXPECT_EQ(watcher.files_announced(), kFinishedTrialFiles.size());
}

TEST(LocalWatcher, WithoutFollowNothingAfterTheScanIsAnnounced) {
  TempDir dir;
  write_step(dir.path(), 0, "worker_0");
  boost::asio::io_context io;
  Announcements seen;
  LocalWatcher watcher(io, dir.path(), {.follow = false}, seen.callback());
  watcher.start();
  io.run();
  ASSERT_EQ(seen.count(), 1u);

  write_step(dir.path(), 1, "worker_0");
  write_step(dir.path(), 2000, "worker_0");
  io.restart();
  io.run();  // nothing is pending: no watch, no timer
  EXPECT_EQ(seen.count(), 1u);
}

TEST(LocalWatcher, ReplayAnnouncesEmptyIndexFilesForTheConsumerToReport) {
  TempDir dir;
  write_text_file(dir.path() / "index/000000000/000000000003_worker_0.json", "");
  boost::asio::io_context io;
  Announcements seen;
  LocalWatcher watcher(io, dir.path(), {.follow = false}, seen.callback());
  watcher.start();
  io.run();
  const auto files = seen.files();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].size, 0u);
}

TEST(LocalWatcher, FollowingWaitsForAnEmptyIndexFileToBeClosedWithContent) {
  TempDir dir;
  const fs::path empty = dir.path() / "index/000000000/000000000003_worker_0.json";
  write_text_file(empty, "");
  write_collections(dir.path(), "worker_0");
  WatcherOnThread running(dir.path(), following());
  running.start();
  ASSERT_TRUE(eventually([&] { return running.seen().count() == 1; }));
  EXPECT_EQ(running.seen().paths()[0], "collections/000000000/worker_0_collections.json");

  write_text_file(empty, "{\"meta\": {}}");  // written in place: announced when closed
  ASSERT_TRUE(eventually([&] { return running.seen().count() == 2; }));
  const auto files = running.seen().files();
  EXPECT_EQ(files[1].path, "index/000000000/000000000003_worker_0.json");
  EXPECT_EQ(files[1].size, fs::file_size(empty));
}

TEST(LocalWatcher, FollowsAWriterThroughNewBucketFolders) {
  TempDir dir;
  write_step(dir.path(), 0, "worker_0");
  WatcherOnThread running(dir.path(), following());
  running.start();
  ASSERT_TRUE(eventually([&] { return running.seen().count() == 1; }));

  // Every step in a folder of its own, created and filled at once: the file lands before the
  // watcher can add the folder's watch. No periodic rescan runs: the folder's own scan must
  // find it.
  std::set<std::string> expected = {index_file_path(0, "worker_0")};
  std::thread writer([root = dir.path()] {
    for (std::int64_t step = 1000; step <= 40000; step += 1000) {
      write_step(root, step, "worker_1");
      write_step(root, step, "worker_0");
    }
    write_collections(root, "worker_0");
    write_collections(root, "worker_1");
    write_end_marker(root);
  });
  writer.join();
  for (std::int64_t step = 1000; step <= 40000; step += 1000) {
    expected.insert(index_file_path(step, "worker_0"));
    expected.insert(index_file_path(step, "worker_1"));
  }
  expected.insert(collections_file_path("worker_0"));
  expected.insert(collections_file_path("worker_1"));
  expected.insert(std::string(kEndOfJobMarker));

  EXPECT_TRUE(eventually([&] { return running.seen().count() >= expected.size(); }))
      << running.seen().count() << " of " << expected.size();
  const auto paths = running.seen().paths();
  EXPECT_EQ(std::set<std::string>(paths.begin(), paths.end()), expected);
  EXPECT_THAT(running.seen().duplicates(), ::testing::IsEmpty());
  for (const auto& file : running.seen().files()) {
    EXPECT_EQ(file.size, fs::file_size(dir.path() / file.path)) << file.path;
  }
  const auto files = running.seen().files();
  const auto end = std::find_if(files.begin(), files.end(),
                                [](const TrialFile& file) { return file.path == kEndOfJobMarker; });
  ASSERT_NE(end, files.end());
  EXPECT_EQ(end->kind, TrialFile::Kind::EndMarker);
  EXPECT_EQ(end->size, 0u);
}

TEST(LocalWatcher, FollowsATrialFolderThatStartsEmpty) {
  TempDir dir;
  WatcherOnThread running(dir.path(), following());
  running.start();
  // Creates collections/ and collections/000000000/ together. Once it is announced, the
  // watcher has started: what follows can only be found through inotify.
  write_collections(dir.path(), "worker_0");
  ASSERT_TRUE(eventually([&] { return running.seen().count() == 1; }));
  EXPECT_EQ(running.seen().files()[0].kind, TrialFile::Kind::Collections);

  write_step(dir.path(), 7, "worker_0");  // creates index/ and index/000000000/ together
  ASSERT_TRUE(eventually([&] { return running.seen().count() == 2; }));
  EXPECT_EQ(running.seen().paths()[1], index_file_path(7, "worker_0"));
}

TEST(LocalWatcher, AnnouncesARenamedFileUnderItsFinalNameOnly) {
  TempDir dir;
  write_step(dir.path(), 0, "worker_0");
  WatcherOnThread running(dir.path(), following());
  running.start();
  ASSERT_TRUE(eventually([&] { return running.seen().count() == 1; }));

  const fs::path final_path = dir.path() / "index/000000000/000000000001_worker_0.json";
  fs::path temporary = final_path;
  temporary += ".tmp";
  write_text_file(temporary, "{\"meta\": {\"mode\": \"TRAIN\", \"mode_step\": 1}}");
  fs::rename(temporary, final_path);
  ASSERT_TRUE(eventually([&] { return running.seen().count() == 2; }));
  const auto files = running.seen().files();
  EXPECT_EQ(files[1].path, "index/000000000/000000000001_worker_0.json");
  EXPECT_EQ(files[1].size, fs::file_size(final_path));
}

TEST(LocalWatcher, AnnouncesAFileWrittenInPlaceOnlyOnceItIsClosed) {
  TempDir dir;
  write_step(dir.path(), 0, "worker_0");
  WatcherOnThread running(dir.path(), following());
  running.start();
  ASSERT_TRUE(eventually([&] { return running.seen().count() == 1; }));

  const fs::path in_place = dir.path() / "index/000000000/000000000001_worker_0.json";
  std::ofstream out(in_place, std::ios::binary);
  out << "{\"meta\": {\"mode\": ";
  out.flush();
  // A file renamed into place after it: once it is announced, the watcher has handled the
  // events before it, the half-written file's creation included.
  write_step(dir.path(), 2, "worker_0");
  ASSERT_TRUE(eventually([&] { return running.seen().has(index_file_path(2, "worker_0")); }));
  EXPECT_FALSE(running.seen().has("index/000000000/000000000001_worker_0.json"));

  out << "\"TRAIN\", \"mode_step\": 1}}";
  out.close();
  ASSERT_TRUE(
      eventually([&] { return running.seen().has("index/000000000/000000000001_worker_0.json"); }));
  for (const auto& file : running.seen().files()) {
    EXPECT_EQ(file.size, fs::file_size(dir.path() / file.path)) << file.path;
  }
}

TEST(LocalWatcher, FollowsAWriterThatWritesInPlace) {
  TempDir dir;
  WatcherOnThread running(dir.path(), following());
  running.start();
  std::set<std::string> expected;
  for (std::int64_t step = 0; step < 3000; step += 100) {
    write_step(dir.path(), step, "worker_0", /*atomic_rename=*/false);
    expected.insert(index_file_path(step, "worker_0"));
  }
  ASSERT_TRUE(eventually([&] { return running.seen().count() >= expected.size(); }))
      << running.seen().count() << " of " << expected.size();
  const auto paths = running.seen().paths();
  EXPECT_EQ(std::set<std::string>(paths.begin(), paths.end()), expected);
  EXPECT_THAT(running.seen().duplicates(), ::testing::IsEmpty());
  for (const auto& file : running.seen().files()) {
    EXPECT_GT(file.size, 0u) << file.path;
    EXPECT_EQ(file.size, fs::file_size(dir.path() / file.path)) << file.path;
  }
}

TEST(LocalWatcher, AnnouncesFilesInWhateverOrderTheyLand) {
  TempDir dir;
  write_collections(dir.path(), "worker_0");
  WatcherOnThread running(dir.path(), following());
  running.start();
  ASSERT_TRUE(eventually([&] { return running.seen().count() == 1; }));

  // Each file is announced before the next is written: nothing waits for an earlier step or
  // for worker_0.
  const std::vector<std::pair<std::int64_t, std::string>> arrivals = {
      {5, "worker_1"}, {5, "worker_0"}, {2, "worker_0"}, {3000, "worker_0"}, {2000, "worker_1"}};
  std::vector<std::string> expected_order = {collections_file_path("worker_0")};
  for (const auto& [step, worker] : arrivals) {
    write_step(dir.path(), step, worker);
    expected_order.push_back(index_file_path(step, worker));
    ASSERT_TRUE(eventually([&] { return running.seen().count() == expected_order.size(); }))
        << "step " << step << " " << worker;
  }
  EXPECT_THAT(running.seen().paths(), ElementsAreArray(expected_order));
}

TEST(LocalWatcher, PicksUpAFolderMovedIntoTheTrial) {
  TempDir dir;
  const fs::path trial = dir.path() / "trial";
  const fs::path staging = dir.path() / "staging";
  write_step(trial, 0, "worker_0");
  write_step(staging, 1000, "worker_0");
  write_step(staging, 1001, "worker_0");
  WatcherOnThread running(trial, following());
  running.start();
  ASSERT_TRUE(eventually([&] { return running.seen().count() == 1; }));

  fs::rename(staging / "index/000000001", trial / "index/000000001");
  ASSERT_TRUE(eventually([&] { return running.seen().count() == 3; }));
  EXPECT_THAT(running.seen().paths(),
              ElementsAreArray({index_file_path(0, "worker_0"), index_file_path(1000, "worker_0"),
                                index_file_path(1001, "worker_0")}));

  // The moved folder is watched under its new name.
  write_step(trial, 1002, "worker_0");
  ASSERT_TRUE(eventually([&] { return running.seen().count() == 4; }));
  EXPECT_EQ(running.seen().paths()[3], index_file_path(1002, "worker_0"));
}

TEST(LocalWatcher, StopsReportingAFolderMovedOutOfTheTrial) {
  TempDir dir;
  const fs::path trial = dir.path() / "trial";
  write_step(trial, 0, "worker_0");
  write_step(trial, 1000, "worker_0");
  WatcherOnThread running(trial, following());
  running.start();
  ASSERT_TRUE(eventually([&] { return running.seen().count() == 2; }));

  // The folder leaves, a new one takes its name, and a file there is being written in place.
  const fs::path moved = dir.path() / "moved-away";
  fs::rename(trial / "index/000000001", moved);
  fs::create_directory(trial / "index/000000001");
  // Once this is announced, the new folder is watched: the file below is seen created.
  write_step(trial, 1005, "worker_0");
  ASSERT_TRUE(eventually([&] { return running.seen().has(index_file_path(1005, "worker_0")); }));
  const std::string name = "000000001001_worker_0.json";
  std::ofstream in_place(trial / "index/000000001" / name, std::ios::binary);
  in_place << "{\"meta\": ";
  in_place.flush();
  // A file of that name closed in the folder that left must not pass for the trial's.
  write_text_file(moved / name, "{}");
  write_step(trial, 1, "worker_0");  // announced after all of the above was handled
  ASSERT_TRUE(eventually([&] { return running.seen().has(index_file_path(1, "worker_0")); }));
  EXPECT_FALSE(running.seen().has(index_file_path(1001, "worker_0")));

  in_place << "{}}";
  in_place.close();
  ASSERT_TRUE(eventually([&] { return running.seen().has(index_file_path(1001, "worker_0")); }));
  const auto files = running.seen().files();
  EXPECT_EQ(files.back().size, fs::file_size(trial / "index/000000001" / name));
}

TEST(LocalWatcher, FollowsAFolderRemovedAndCreatedAgain) {
  TempDir dir;
  write_step(dir.path(), 0, "worker_0");
  write_step(dir.path(), 1000, "worker_0");
  WatcherOnThread running(dir.path(), following());
  running.start();
  ASSERT_TRUE(eventually([&] { return running.seen().count() == 2; }));

  fs::remove_all(dir.path() / "index/000000001");
  write_step(dir.path(), 1001, "worker_0");
  ASSERT_TRUE(eventually([&] { return running.seen().has(index_file_path(1001, "worker_0")); }));
  write_step(dir.path(), 1002, "worker_0");  // into the folder's new watch
  ASSERT_TRUE(eventually([&] { return running.seen().has(index_file_path(1002, "worker_0")); }));
  EXPECT_THAT(running.seen().duplicates(), ::testing::IsEmpty());
}

// A hard link creates a file without opening it for writing: inotify reports IN_CREATE and
// never IN_CLOSE_WRITE, so only the periodic rescan can announce it.
TEST(LocalWatcher, RescansCatchWhatInotifyDoesNotReportAndAnnounceItOnce) {
  TempDir dir;
  const fs::path trial = dir.path() / "trial";
  write_step(trial, 0, "worker_0");
  write_step(dir.path() / "elsewhere", 1, "worker_0");
  write_step(dir.path() / "elsewhere", 2, "worker_0");
  WatcherOnThread running(trial, following(5ms));
  running.start();
  ASSERT_TRUE(eventually([&] { return running.seen().count() == 1; }));

  for (const std::int64_t step : {1, 2}) {
    const std::string path = index_file_path(step, "worker_0");
    fs::create_hard_link(dir.path() / "elsewhere" / path, trial / path);
    ASSERT_TRUE(eventually([&] { return running.seen().has(path); })) << path;
  }
  // More rescans (each link needed two), then still one announcement each.
  std::this_thread::sleep_for(100ms);
  EXPECT_THAT(running.seen().paths(),
              ElementsAreArray({index_file_path(0, "worker_0"), index_file_path(1, "worker_0"),
                                index_file_path(2, "worker_0")}));
  EXPECT_EQ(running.watcher().files_announced(), 3u);
}

TEST(LocalWatcher, RescansEverythingAfterTheEventQueueOverflows) {
  std::ifstream limit_file("/proc/sys/fs/inotify/max_queued_events");
  long max_queued_events = 0;
  if (!(limit_file >> max_queued_events) || max_queued_events > 100000) {
    GTEST_SKIP() << "cannot overflow an inotify queue of " << max_queued_events
                 << " events quickly (/proc/sys/fs/inotify/max_queued_events)";
  }
  TempDir dir;
  write_step(dir.path(), 0, "worker_0");
  WatcherOnThread running(dir.path(), following());
  running.start();
  ASSERT_TRUE(eventually([&] { return running.seen().count() == 1; }));

  // Each file renamed into place makes four events (create, close, moved from, moved to); the
  // io thread is held so that none is read before the queue overflows.
  const std::size_t files = static_cast<std::size_t>(max_queued_events) / 4 + 500;
  std::promise<void> release = running.block_io_thread();
  const fs::path bucket = dir.path() / "index/000000000";
  for (std::size_t i = 1; i <= files; ++i) {
    const fs::path path = bucket / (std::to_string(100000000000 + i) + "_worker_0.json");
    fs::path temporary = path;
    temporary += ".tmp";
    write_text_file(temporary, "{}");
    fs::rename(temporary, path);
  }
  release.set_value();
  EXPECT_TRUE(eventually([&] { return running.seen().count() == files + 1; }))
      << running.seen().count() << " of " << files + 1;
  EXPECT_THAT(running.seen().duplicates(), ::testing::IsEmpty());
}

TEST(LocalWatcher, StopEndsTheCallbacksAndReleasesTheIoContext) {
  TempDir dir;
  write_step(dir.path(), 0, "worker_0");
  WatcherOnThread running(dir.path(), following(5ms));
  running.start();
  ASSERT_TRUE(eventually([&] { return running.seen().count() == 1; }));

  running.watcher().stop();  // from the test thread, while the io thread runs
  const std::size_t batches = running.seen().batches().size();
  // Nothing is left for the io_context: no watch, no timer, so run() returns.
  EXPECT_TRUE(eventually([&] { return running.io_finished(); }));
  write_step(dir.path(), 1, "worker_0");
  write_step(dir.path(), 1000, "worker_0");
  std::this_thread::sleep_for(50ms);  // what could still come (nothing should)
  EXPECT_EQ(running.seen().batches().size(), batches);
  running.watcher().stop();  // twice is harmless
}

TEST(LocalWatcher, StopFromTheCallbackEndsTheCallbacks) {
  TempDir dir;
  write_step(dir.path(), 0, "worker_0");
  std::unique_ptr<WatcherOnThread> running;
  running = std::make_unique<WatcherOnThread>(dir.path(), following(5ms));
  running->seen().set_after_each([&running] { running->watcher().stop(); });
  running->start();
  ASSERT_TRUE(eventually([&] { return running->io_finished(); }));
  write_step(dir.path(), 1, "worker_0");
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(running->seen().batches().size(), 1u);
}

TEST(LocalWatcher, FallsBackToRescanningWithoutInotify) {
#ifdef __SANITIZE_ADDRESS__
  GTEST_SKIP() << "runs the process out of file descriptors, which the sanitizer runtimes need "
                  "(UBSan opens files on the first check of each virtual call)";
#endif
  TempDir dir;
  write_step(dir.path(), 0, "worker_0");
  WatcherOnThread running(dir.path(), following(20ms));

  // No descriptor left for this process: inotify_init1 fails, as it does when the user's
  // inotify instances run out. start() opens inotify on this thread; the first scan runs on the
  // io thread, with descriptors again.
  ::testing::internal::CaptureStderr();
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  const int lowest_free = ::dup(STDIN_FILENO);
  ASSERT_GE(lowest_free, 0);
  ::close(lowest_free);
  rlimit lowered = saved;
  lowered.rlim_cur = static_cast<rlim_t>(lowest_free);
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &lowered), 0);
  running.watcher().start();
  ::setrlimit(RLIMIT_NOFILE, &saved);
  running.io().run_one();
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(said, HasSubstr("cannot start inotify: Too many open files; following " +
                              dir.path().string() + " by rescanning every 20 ms instead"));

  running.run();
  ASSERT_TRUE(eventually([&] { return running.seen().count() == 1; }));
  write_step(dir.path(), 1, "worker_0");
  write_step(dir.path(), 1000, "worker_0");
  write_end_marker(dir.path());
  ASSERT_TRUE(eventually([&] { return running.seen().count() == 4; }));
  EXPECT_THAT(running.seen().duplicates(), ::testing::IsEmpty());
  EXPECT_TRUE(running.seen().has(std::string(kEndOfJobMarker)));
}

TEST(LocalWatcher, RejectsARootThatIsNotAReadableFolder) {
  TempDir dir;
  boost::asio::io_context io;
  Announcements seen;
  const fs::path missing = dir.path() / "no-such-trial";
  try {
    LocalWatcher watcher(io, missing, {}, seen.callback());
    ADD_FAILURE() << "no StorageError";
  } catch (const StorageError& error) {
    EXPECT_THAT(error.what(), HasSubstr(missing.string()));
    EXPECT_THAT(error.what(), HasSubstr("No such file or directory"));
  }
  write_text_file(dir.path() / "file", "x");
  EXPECT_THROW(LocalWatcher(io, dir.path() / "file", {}, seen.callback()), StorageError);
  EXPECT_THROW(LocalWatcher(io, dir.path(), {.rescan_interval = 0ms}, seen.callback()),
               std::invalid_argument);
}

TEST(LocalWatcher, StartsOnlyOnce) {
  TempDir dir;
  boost::asio::io_context io;
  Announcements seen;
  LocalWatcher watcher(io, dir.path(), {.follow = false}, seen.callback());
  watcher.start();
  EXPECT_THROW(watcher.start(), std::logic_error);
  io.run();
}

// serve's case: more watchers than Linux gives a user inotify instances by default (128), each
// following through one shared instance. No rescan runs (an hour apart): a step each writer adds
// after the watchers have started reaches them through inotify or not at all.
TEST(LocalWatcher, ManyWatchersFollowThroughOneSharedInotifyInstance) {
  constexpr int kWatchers = 300;
  boost::asio::io_context hub_io;
  auto hub_work = boost::asio::make_work_guard(hub_io);
  std::thread hub_thread([&] { hub_io.run(); });
  const auto hub = InotifyHub::open(hub_io.get_executor());
  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  std::thread io_thread([&] { io.run(); });

  std::vector<std::unique_ptr<TempDir>> roots;
  std::vector<std::unique_ptr<Announcements>> seen;
  std::vector<std::unique_ptr<LocalWatcher>> watchers;
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < kWatchers; ++i) {
    roots.push_back(std::make_unique<TempDir>());
    seen.push_back(std::make_unique<Announcements>());
    watchers.push_back(std::make_unique<LocalWatcher>(
        io, roots.back()->path(),
        LocalWatcher::Options{.follow = true, .rescan_interval = kNoRescan, .inotify_hub = hub},
        seen.back()->callback()));
    watchers.back()->start();
  }
  // Each watcher's first scan watches its (empty) root: then it follows.
  EXPECT_TRUE(eventually([&] { return hub->watch_count() == kWatchers; }));
  EXPECT_EQ(hub->subscriber_count(), static_cast<std::size_t>(kWatchers));
  for (const auto& root : roots) write_step(root->path(), 3, "worker_0");
  const std::string step_file = "index/000000000/000000000003_worker_0.json";
  EXPECT_TRUE(eventually([&] {
    return std::all_of(seen.begin(), seen.end(),
                       [&](const auto& announced) { return announced->has(step_file); });
  }));
  for (int i = 0; i < kWatchers; ++i) {
    EXPECT_EQ(seen[i]->paths(), std::vector<std::string>{step_file}) << "watcher " << i;
  }
  for (const auto& watcher : watchers) watcher->stop();
  // Stopped watchers let go of their watches (root and index/000000000/ each); the instance stays.
  EXPECT_TRUE(eventually([&] { return hub->watch_count() == 0 && hub->subscriber_count() == 0; }));
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(said.find("rescanning"), std::string::npos) << said;

  watchers.clear();
  hub->close();
  work.reset();
  hub_work.reset();
  io_thread.join();
  hub_thread.join();
}

}  // namespace
}  // namespace rulestream

// --- The TensorBoard filter: event files that grow in place, in any folder ------------------

namespace rulestream {
namespace {

void append_bytes(const fs::path& path, std::size_t count) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << std::string(count, 'x');
}

LocalWatcher::Options following_a_logdir() {
  return {.follow = true,
          .rescan_interval = kNoRescan,
          .rescan_while_watching = kNoRescan,
          .filter = FileFilter::tensorboard_logdir(),
          .inotify_hub = nullptr};
}

// The sizes announced for `path`, in order.
std::vector<std::uint64_t> sizes_of(const Announcements& seen, const std::string& path) {
  std::vector<std::uint64_t> sizes;
  for (const TrialFile& file : seen.files()) {
    if (file.path == path) sizes.push_back(file.size);
  }
  return sizes;
}

TEST(LocalWatcherOfALogdir, AnnouncesEventFilesInEveryFolderEachTimeTheyGrow) {
  TempDir dir;
  append_bytes(dir.path() / "train/events.out.tfevents.1.host", 10);
  append_bytes(dir.path() / "train/notes.txt", 4);  // not an event file
  append_bytes(dir.path() / "events/000000000001/000000000001_worker_0.tfevents", 8);  // smdebug's
  fs::create_directories(dir.path() / "eval");
  std::ofstream(dir.path() / "eval/events.out.tfevents.2.host").close();  // empty: nothing yet
  WatcherOnThread running(dir.path(), following_a_logdir());
  running.start();
  ASSERT_TRUE(eventually([&] { return running.seen().count() == 1; }));
  EXPECT_EQ(running.seen().files()[0].kind, TrialFile::Kind::EventFile);
  EXPECT_EQ(sizes_of(running.seen(), "train/events.out.tfevents.1.host"),
            std::vector<std::uint64_t>{10});

  // No rescan runs in this test: what follows, inotify reported.
  append_bytes(dir.path() / "train/events.out.tfevents.1.host", 5);
  ASSERT_TRUE(eventually(
      [&] { return sizes_of(running.seen(), "train/events.out.tfevents.1.host").size() == 2; }));
  EXPECT_EQ(sizes_of(running.seen(), "train/events.out.tfevents.1.host"),
            (std::vector<std::uint64_t>{10, 15}));
  append_bytes(dir.path() / "eval/events.out.tfevents.2.host", 3);
  append_bytes(dir.path() / "runs/a/b/events.out.tfevents.3.host", 7);  // folders made now
  ASSERT_TRUE(eventually([&] {
    return running.seen().has("eval/events.out.tfevents.2.host") &&
           running.seen().has("runs/a/b/events.out.tfevents.3.host");
  }));
  EXPECT_EQ(sizes_of(running.seen(), "eval/events.out.tfevents.2.host"),
            std::vector<std::uint64_t>{3});
  EXPECT_EQ(sizes_of(running.seen(), "runs/a/b/events.out.tfevents.3.host"),
            std::vector<std::uint64_t>{7});
  EXPECT_FALSE(running.seen().has("train/notes.txt"));
  EXPECT_FALSE(running.seen().has("events/000000000001/000000000001_worker_0.tfevents"));
}

TEST(LocalWatcherOfALogdir, ManyWritesBetweenTwoLooksAreOneAnnouncement) {
  TempDir dir;
  const fs::path file = dir.path() / "events.out.tfevents.1.host";
  append_bytes(file, 1);
  WatcherOnThread running(dir.path(), following_a_logdir());
  running.start();
  ASSERT_TRUE(eventually([&] { return running.seen().count() == 1; }));
  {
    // The io thread is held while 50 writes land: their events arrive in one delivery.
    std::promise<void> release = running.block_io_thread();
    for (int i = 0; i < 50; ++i) append_bytes(file, 2);
    release.set_value();
  }
  ASSERT_TRUE(eventually([&] {
    const auto sizes = sizes_of(running.seen(), "events.out.tfevents.1.host");
    return !sizes.empty() && sizes.back() == 101;
  }));
  std::this_thread::sleep_for(100ms);  // nothing more is coming
  EXPECT_EQ(sizes_of(running.seen(), "events.out.tfevents.1.host"),
            (std::vector<std::uint64_t>{1, 101}));
}

}  // namespace
}  // namespace rulestream
