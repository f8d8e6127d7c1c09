#include "engine/graph/file_tracker.hpp"

#include <gtest/gtest.h>

#include "core/model/trial_layout.hpp"

namespace rulestream {
namespace {

TrialFile index_file(std::int64_t step, std::int64_t modified_ns = 0) {
  return {TrialFile::Kind::Index, index_file_path(step, "worker_0"), 10, modified_ns};
}

TEST(FileTrackerTest, AFileIsHandedOnOnce) {
  FileTracker tracker;
  EXPECT_TRUE(tracker.first_sight(index_file(1), std::nullopt));
  EXPECT_FALSE(tracker.first_sight(index_file(1), std::nullopt));
}

TEST(FileTrackerTest, TheLowestStepInFlightHoldsTheLaterOnesUntilItLands) {
  FileTracker tracker;
  EXPECT_EQ(tracker.lowest_in_flight(), std::nullopt);
  tracker.first_sight(index_file(5), std::nullopt);
  tracker.first_sight(index_file(3), std::nullopt);
  EXPECT_EQ(tracker.lowest_in_flight(), 3);
  tracker.landed_or_dropped(3);
  EXPECT_EQ(tracker.lowest_in_flight(), 5);
  tracker.landed_or_dropped(5);
  EXPECT_EQ(tracker.lowest_in_flight(), std::nullopt);
}

TEST(FileTrackerTest, ACollectionsFileHoldsEveryStepWhileItLoads) {
  FileTracker tracker;
  tracker.first_sight(index_file(0), std::nullopt);
  tracker.first_sight({TrialFile::Kind::Collections, collections_file_path("worker_0")},
                      std::nullopt);
  EXPECT_EQ(tracker.lowest_in_flight(), FileTracker::kCollectionsInFlight);
  tracker.landed_or_dropped(FileTracker::kCollectionsInFlight);
  EXPECT_EQ(tracker.lowest_in_flight(), 0);
}

TEST(FileTrackerTest, AnIndexFileArrivesWhenItWasSeenElseWhenItWasWritten) {
  FileTracker tracker;
  const auto seen = std::chrono::system_clock::time_point(std::chrono::seconds(1'000'000));
  tracker.first_sight(index_file(1, 5'000'000'000), seen);
  EXPECT_EQ(tracker.arrival_of(index_file(1, 5'000'000'000)), seen);
  // Asked once: then the modification time tells.
  EXPECT_EQ(tracker.arrival_of(index_file(1, 5'000'000'000)),
            std::chrono::system_clock::time_point(std::chrono::seconds(5)));
  EXPECT_EQ(tracker.arrival_of(index_file(2, 0)), std::nullopt);
}

TEST(FileTrackerTest, AReplayAskedToStopFinishesTheStepsItBegan) {
  FileTracker tracker;
  EXPECT_FALSE(tracker.skipped_after_stop(4, false));
  EXPECT_FALSE(tracker.skipped_after_stop(6, false));
  EXPECT_FALSE(tracker.interrupted());
  // Stopping: step 6 has begun (another worker's file may still come); step 7 has not.
  EXPECT_FALSE(tracker.skipped_after_stop(6, true));
  EXPECT_TRUE(tracker.skipped_after_stop(7, true));
  EXPECT_TRUE(tracker.skipped_after_stop(9, true));
  EXPECT_TRUE(tracker.interrupted());
  EXPECT_EQ(tracker.index_files_unread(), 2);
}

}  // namespace
}  // namespace rulestream
