#include "core/memory/shared_refresh.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

namespace rulestream {
namespace {

// A refresh body that the test holds inside until it lets it go: it says when it has started,
// and what it "listed" (the storage's version as it began).
class HeldRefresh {
 public:
  explicit HeldRefresh(const std::atomic<int>& storage_version) : version_(storage_version) {}

  void operator()() {
    const int listed = version_.load();
    started_.set_value();
    release_.get_future().wait();
    seen = listed;
  }
  void wait_started() { started_future_.wait(); }
  void let_go() { release_.set_value(); }

  int seen = -1;

 private:
  const std::atomic<int>& version_;
  std::promise<void> started_;
  std::future<void> started_future_ = started_.get_future();
  std::promise<void> release_;
};

void wait_until_waiting(const SharedRefresh& refresh, std::size_t callers) {
  while (refresh.waiting() < callers) std::this_thread::yield();
}

TEST(SharedRefresh, CallsOneAfterAnotherEachRunTheirOwn) {
  SharedRefresh refresh;
  int runs = 0;
  for (int i = 0; i < 3; ++i) refresh.run([&] { ++runs; });
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(refresh.started(), 3u);
  EXPECT_EQ(refresh.waiting(), 0u);
  EXPECT_EQ(refresh.waited().count(), 0);
}

// Eight callers arrive while one refresh runs: together they wait for one more, and every one
// of them returns only after that one has ended.
TEST(SharedRefresh, CallersArrivingDuringARefreshShareTheNextOne) {
  SharedRefresh refresh;
  const std::atomic<int> version{0};
  HeldRefresh first(version);
  std::thread first_caller([&] { refresh.run(first); });
  first.wait_started();

  constexpr int kCallers = 8;
  std::atomic<int> later_runs{0};
  std::atomic<int> later_ended{0};
  std::vector<int> ended_when_returned(kCallers, -1);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      refresh.run([&] {
        ++later_runs;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        ++later_ended;
      });
      ended_when_returned[c] = later_ended.load();
    });
  }
  wait_until_waiting(refresh, kCallers);
  first.let_go();
  first_caller.join();
  for (auto& caller : callers) caller.join();

  EXPECT_EQ(later_runs.load(), 1);
  EXPECT_EQ(refresh.started(), 2u);
  for (int c = 0; c < kCallers; ++c) {
    EXPECT_EQ(ended_when_returned[c], 1) << "caller " << c << " returned before its refresh ended";
  }
  EXPECT_EQ(refresh.waiting(), 0u);
  EXPECT_GT(refresh.waited().count(), 0);
}

// The refresh under way when a caller arrives listed before what the caller wants to see was
// written: the caller gets the next one, which lists after.
TEST(SharedRefresh, ACallerGetsARefreshThatStartedAfterItCalled) {
  SharedRefresh refresh;
  std::atomic<int> version{0};
  HeldRefresh first(version);
  std::thread first_caller([&] { refresh.run(first); });
  first.wait_started();

  version = 1;  // a file written while the first refresh runs, after it listed
  int seen_by_later = -1;
  std::thread later([&] { refresh.run([&] { seen_by_later = version.load(); }); });
  wait_until_waiting(refresh, 1);
  first.let_go();
  first_caller.join();
  later.join();

  EXPECT_EQ(first.seen, 0);
  EXPECT_EQ(seen_by_later, 1);
  EXPECT_EQ(refresh.started(), 2u);
}

// A refresh that throws satisfies none of its waiters: its caller gets the exception, and a
// waiter runs a refresh of its own.
TEST(SharedRefresh, ARefreshThatThrowsLeavesItsWaitersToRunTheirOwn) {
  SharedRefresh refresh;
  std::promise<void> started;
  std::promise<void> release;
  std::thread failing([&] {
    EXPECT_THROW(refresh.run([&] {
      started.set_value();
      release.get_future().wait();
      throw std::runtime_error("listing failed");
    }),
                 std::runtime_error);
  });
  started.get_future().wait();

  constexpr int kCallers = 3;
  std::atomic<int> own_runs{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&] { refresh.run([&] { ++own_runs; }); });
  }
  wait_until_waiting(refresh, kCallers);
  release.set_value();
  failing.join();
  for (auto& caller : callers) caller.join();

  EXPECT_EQ(own_runs.load(), 1);
  EXPECT_EQ(refresh.started(), 2u);
}

}  // namespace
}  // namespace rulestream
