#include "sources/common/readiness_tracker.hpp"

#include <gtest/gtest.h>

#include <string>

namespace rulestream {
namespace {

using Kind = TrialFile::Kind;
using Observation = ReadinessTracker::Observation;

const std::string kIndex = "index/000000000/000000000005_worker_0.json";
const std::string kEnd = "training_job_end.ts";

TEST(ReadinessTracker, AnnouncesAFileOnce) {
  ReadinessTracker tracker(/*live=*/true);
  EXPECT_TRUE(tracker.scanned(kIndex, Kind::Index, {10, 1}));
  EXPECT_FALSE(tracker.scanned(kIndex, Kind::Index, {10, 1}));
  // Rewritten in place later: still not announced again.
  EXPECT_FALSE(tracker.finished(kIndex));
  EXPECT_FALSE(tracker.scanned(kIndex, Kind::Index, {20, 2}));
  EXPECT_TRUE(tracker.announced(kIndex));
  EXPECT_EQ(tracker.announced_count(), 1u);
}

TEST(ReadinessTracker, LiveScansTakeNonEmptyFilesAndTheEndMarkerAtOnce) {
  ReadinessTracker tracker(/*live=*/true);
  EXPECT_TRUE(tracker.scanned(kIndex, Kind::Index, {10, 1}));
  EXPECT_TRUE(tracker.scanned(kEnd, Kind::EndMarker, {0, 1}));
}

TEST(ReadinessTracker, LiveScansWaitForAnEmptyFileToFillOrHoldStill) {
  ReadinessTracker tracker(/*live=*/true);
  EXPECT_FALSE(tracker.scanned(kIndex, Kind::Index, {0, 1}));
  // Filled since: it may still be growing, so it must hold still for one more scan.
  EXPECT_FALSE(tracker.scanned(kIndex, Kind::Index, {10, 2}));
  EXPECT_TRUE(tracker.scanned(kIndex, Kind::Index, {10, 2}));

  // Left empty: announced all the same (the consumer reports it), never silently dropped.
  const std::string other = "index/000000000/000000000006_worker_0.json";
  EXPECT_FALSE(tracker.scanned(other, Kind::Index, {0, 1}));
  EXPECT_TRUE(tracker.scanned(other, Kind::Index, {0, 1}));
}

// A folder's first listing may come a moment after the initial scan found the same file: a
// writer that has created it but not written yet. Two looks that close together must not settle
// it (LocalWatcher.FollowsAWriterThatWritesInPlace once saw it announced empty).
TEST(ReadinessTracker, ScansCloserTogetherThanTheSettleTimeDoNotSettleAFile) {
  using namespace std::chrono_literals;
  ReadinessTracker tracker(/*live=*/true, /*settle=*/1s);
  const ReadinessTracker::Clock::time_point start{};
  EXPECT_FALSE(tracker.scanned(kIndex, Kind::Index, {0, 1}, start));
  EXPECT_FALSE(tracker.scanned(kIndex, Kind::Index, {0, 1}, start + 1ms));
  EXPECT_FALSE(tracker.scanned(kIndex, Kind::Index, {0, 1}, start + 999ms));
  EXPECT_TRUE(tracker.scanned(kIndex, Kind::Index, {0, 1}, start + 1s));

  // A change restarts the wait from the scan that saw it.
  const std::string other = "index/000000000/000000000006_worker_0.json";
  tracker.created(other);
  EXPECT_FALSE(tracker.scanned(other, Kind::Index, {10, 1}, start));
  EXPECT_FALSE(tracker.scanned(other, Kind::Index, {20, 2}, start + 900ms));
  EXPECT_FALSE(tracker.scanned(other, Kind::Index, {20, 2}, start + 1500ms));
  EXPECT_TRUE(tracker.scanned(other, Kind::Index, {20, 2}, start + 1900ms));
}

TEST(ReadinessTracker, AFileClosedOrRenamedIsReadyWhateverItsSize) {
  ReadinessTracker tracker(/*live=*/true);
  tracker.created(kIndex);
  EXPECT_TRUE(tracker.finished(kIndex));
  EXPECT_FALSE(tracker.finished(kIndex));
}

TEST(ReadinessTracker, ScansWaitForAFileBeingWrittenInPlaceToSettle) {
  ReadinessTracker tracker(/*live=*/true);
  tracker.created(kIndex);
  EXPECT_FALSE(tracker.scanned(kIndex, Kind::Index, {10, 1}));
  EXPECT_FALSE(tracker.scanned(kIndex, Kind::Index, {20, 2}));  // still growing
  EXPECT_FALSE(tracker.scanned(kIndex, Kind::Index, {20, 3}));  // touched
  EXPECT_TRUE(tracker.scanned(kIndex, Kind::Index, {20, 3}));   // unchanged since last scan
}

TEST(ReadinessTracker, CloseAfterScansOfAFileBeingWrittenAnnouncesIt) {
  ReadinessTracker tracker(/*live=*/true);
  tracker.created(kIndex);
  EXPECT_FALSE(tracker.scanned(kIndex, Kind::Index, {10, 1}));
  EXPECT_TRUE(tracker.finished(kIndex));
  EXPECT_FALSE(tracker.scanned(kIndex, Kind::Index, {10, 1}));
}

TEST(ReadinessTracker, AnEndMarkerBeingWrittenWaitsLikeAnyFile) {
  ReadinessTracker tracker(/*live=*/true);
  tracker.created(kEnd);
  EXPECT_FALSE(tracker.scanned(kEnd, Kind::EndMarker, {0, 1}));
  EXPECT_TRUE(tracker.scanned(kEnd, Kind::EndMarker, {0, 1}));
}

TEST(ReadinessTracker, CreatedAfterAnnouncementChangesNothing) {
  ReadinessTracker tracker(/*live=*/true);
  EXPECT_TRUE(tracker.finished(kIndex));
  tracker.created(kIndex);
  EXPECT_FALSE(tracker.scanned(kIndex, Kind::Index, {10, 1}));
  EXPECT_EQ(tracker.announced_count(), 1u);
}

TEST(ReadinessTracker, ReplayTakesEveryFileAScanFinds) {
  ReadinessTracker tracker(/*live=*/false);
  // An empty index file in an archived trial is broken, not unfinished: the consumer reports it.
  EXPECT_TRUE(tracker.scanned(kIndex, Kind::Index, {0, 1}));
  EXPECT_FALSE(tracker.scanned(kIndex, Kind::Index, {0, 1}));
  EXPECT_TRUE(tracker.scanned(kEnd, Kind::EndMarker, {0, 1}));
}

}  // namespace
}  // namespace rulestream
