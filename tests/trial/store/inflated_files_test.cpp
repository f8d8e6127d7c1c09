// InflatedFiles: the compressed event files a trial keeps inflated, most recently used first,
// within a count and a byte budget.
#include "trial/store/inflated_files.hpp"

#include <gtest/gtest.h>

#include <string>

namespace rulestream {
namespace {

SharedBytes bytes_of(std::size_t size, char fill) {
  return SharedBytes::from_string(std::string(size, fill));
}

TEST(InflatedFiles, KeepsTheMostRecentlyUsedFilesWithinCountAndBudget) {
  InflatedFiles files(/*budget_bytes=*/100, /*max_files=*/2);
  EXPECT_FALSE(files.find(1, 0).has_value());
  files.keep(1, bytes_of(40, 'a'));
  files.keep(2, bytes_of(40, 'b'));
  ASSERT_TRUE(files.find(1, 40).has_value());  // 1 is now the most recently used
  EXPECT_EQ(files.find(1, 40)->as_string_view(), std::string(40, 'a'));
  files.keep(3, bytes_of(40, 'c'));  // a third file: the least recently used (2) leaves
  EXPECT_TRUE(files.find(1, 0).has_value());
  EXPECT_FALSE(files.find(2, 0).has_value());
  EXPECT_TRUE(files.find(3, 0).has_value());
  EXPECT_EQ(files.kept_files(), 2u);
  EXPECT_EQ(files.kept_bytes(), 80u);

  files.keep(4, bytes_of(70, 'd'));  // over the budget with both others: the older ones leave
  EXPECT_TRUE(files.find(4, 70).has_value());
  EXPECT_EQ(files.kept_bytes(), 70u);
  EXPECT_EQ(files.kept_files(), 1u);

  files.keep(5, bytes_of(101, 'e'));  // larger than the whole budget: not kept, nothing leaves
  EXPECT_FALSE(files.find(5, 0).has_value());
  EXPECT_TRUE(files.find(4, 0).has_value());
}

// A file still being written may have grown since it was inflated: a record past what was kept
// is not served from it, and keeping the file again replaces it.
TEST(InflatedFiles, AFileThatGrewIsInflatedAgain) {
  InflatedFiles files(1000, 4);
  files.keep(7, bytes_of(50, 'x'));
  EXPECT_TRUE(files.find(7, 50).has_value());
  EXPECT_FALSE(files.find(7, 51).has_value());
  files.keep(7, bytes_of(80, 'y'));
  EXPECT_EQ(files.kept_files(), 1u);
  EXPECT_EQ(files.kept_bytes(), 80u);
  EXPECT_EQ(files.find(7, 51)->as_string_view(), std::string(80, 'y'));
}

}  // namespace
}  // namespace rulestream
