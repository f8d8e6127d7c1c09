// InflatedFiles: the compressed event files a trial keeps inflated, most recently used first,
// at most a few, each with the bytes its inflation took from the job's budget; work that needs
// the budget has the least recently used leave.
#include "trial/store/inflated_files.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/model/growing_reservation.hpp"

namespace rulestream {
namespace {

// Keeps `size` bytes of `fill` as `file`'s, their bytes taken from `budget` as an inflation's.
void keep(InflatedFiles& files, MemoryBudget& budget, FileId file, std::size_t size, char fill) {
  MemoryReservation reservation = MemoryReservation::try_take(budget, size);
  ASSERT_TRUE(reservation) << "the test's budget is too small";
  files.keep(file, SharedBytes::from_string(std::string(size, fill)), std::move(reservation));
}

TEST(InflatedFiles, KeepsTheMostRecentlyUsedFilesWithinCount) {
  auto budget = std::make_shared<MemoryBudget>(1000);
  InflatedFiles files(budget, /*max_files=*/2);
  EXPECT_FALSE(files.find(1, 0).has_value());
  keep(files, *budget, 1, 40, 'a');
  keep(files, *budget, 2, 40, 'b');
  ASSERT_TRUE(files.find(1, 40).has_value());  // 1 is now the most recently used
  EXPECT_EQ(files.find(1, 40)->as_string_view(), std::string(40, 'a'));
  keep(files, *budget, 3, 40, 'c');  // a third file: the least recently used (2) leaves
  EXPECT_TRUE(files.find(1, 0).has_value());
  EXPECT_FALSE(files.find(2, 0).has_value());
  EXPECT_TRUE(files.find(3, 0).has_value());
  EXPECT_EQ(files.kept_files(), 2u);
  EXPECT_EQ(files.kept_bytes(), 80u);
  EXPECT_EQ(budget->reserved(), 80u);  // the file that left gave its bytes back
}

// Work short of bytes (another file's inflation) evicts the least recently used files, only as
// many as it needs.
TEST(InflatedFiles, WorkShortOfBytesHasTheLeastRecentlyUsedFilesLeave) {
  auto budget = std::make_shared<MemoryBudget>(100);
  InflatedFiles files(budget, 4);
  keep(files, *budget, 1, 30, 'a');
  keep(files, *budget, 2, 30, 'b');
  keep(files, *budget, 3, 30, 'c');
  ASSERT_TRUE(files.find(1, 0).has_value());  // 2 is now the least recently used
  GrowingReservation work(*budget);
  EXPECT_EQ(work.grow(40), GrowingReservation::Grant::Granted);
  EXPECT_FALSE(files.find(2, 0).has_value());
  EXPECT_TRUE(files.find(1, 0).has_value());
  EXPECT_TRUE(files.find(3, 0).has_value());
  EXPECT_EQ(budget->reserved(), 100u);
}

// A file still being written may have grown since it was inflated: a record past what was kept
// is not served from it, and keeping the file again replaces it (and its bytes in the budget).
TEST(InflatedFiles, AFileThatGrewIsInflatedAgain) {
  auto budget = std::make_shared<MemoryBudget>(1000);
  InflatedFiles files(budget, 4);
  keep(files, *budget, 7, 50, 'x');
  EXPECT_TRUE(files.find(7, 50).has_value());
  EXPECT_FALSE(files.find(7, 51).has_value());
  keep(files, *budget, 7, 80, 'y');
  EXPECT_EQ(files.kept_files(), 1u);
  EXPECT_EQ(files.kept_bytes(), 80u);
  EXPECT_EQ(budget->reserved(), 80u);
  EXPECT_EQ(files.find(7, 51)->as_string_view(), std::string(80, 'y'));
}

TEST(InflatedFiles, GivesEveryByteBackWhenItGoes) {
  auto budget = std::make_shared<MemoryBudget>(1000);
  {
    InflatedFiles files(budget, 4);
    keep(files, *budget, 1, 300, 'a');
    keep(files, *budget, 2, 300, 'b');
  }
  EXPECT_EQ(budget->reserved(), 0u);
  EXPECT_EQ(budget->reclaim(100), 0u);  // and the budget no longer reaches it
}

}  // namespace
}  // namespace rulestream
