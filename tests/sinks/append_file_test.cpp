// The append rules of FileSink and the dead-letter files: checked without creating, opened on
// demand.
#include "sinks/append_file.hpp"

#include <gtest/gtest.h>

#include "core/model/exceptions.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using testing::read_text_file;
using testing::TempDir;
using testing::write_text_file;

std::string storage_error_of(const std::filesystem::path& path) {
  try {
    check_appendable(path);
  } catch (const StorageError& error) {
    return error.what();
  }
  return {};
}

TEST(AppendFile, CheckAcceptsAMissingFileInAFolderWithoutCreatingIt) {
  TempDir dir;
  EXPECT_NO_THROW(check_appendable(dir.path() / "dead.jsonl"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "dead.jsonl"));
}

TEST(AppendFile, CheckLeavesAnExistingFileAsItWas) {
  TempDir dir;
  write_text_file(dir.path() / "dead.jsonl", "{\"kept\":true}\n");
  EXPECT_NO_THROW(check_appendable(dir.path() / "dead.jsonl"));
  EXPECT_EQ(read_text_file(dir.path() / "dead.jsonl"), "{\"kept\":true}\n");
}

TEST(AppendFile, CheckNamesAMissingFolderOrAFolderInsteadOfAFile) {
  TempDir dir;
  const auto in_missing = dir.path() / "missing" / "dead.jsonl";
  const std::string missing = storage_error_of(in_missing);
  EXPECT_NE(missing.find(in_missing.string()), std::string::npos) << missing;
  EXPECT_NE(missing.find("No such file or directory"), std::string::npos) << missing;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "missing"));

  const std::string folder = storage_error_of(dir.path());
  EXPECT_NE(folder.find("Is a directory"), std::string::npos) << folder;
}

TEST(AppendFile, OnDemandFileAppearsAtItsFirstLine) {
  TempDir dir;
  const auto path = dir.path() / "dead.jsonl";
  {
    AppendOnDemandFile file(path);
    EXPECT_FALSE(std::filesystem::exists(path));
    EXPECT_EQ(file.append("{\"n\":1}\n"), "");
    EXPECT_EQ(file.append("{\"n\":2}\n"), "");
  }
  AppendOnDemandFile again(path);
  EXPECT_EQ(again.append("{\"n\":3}\n"), "");
  EXPECT_EQ(read_text_file(path), "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n");
}

TEST(AppendFile, OnDemandFileSaysWhyALineWasNotWritten) {
  TempDir dir;
  const auto path = dir.path() / "sub" / "dead.jsonl";
  std::filesystem::create_directory(dir.path() / "sub");
  AppendOnDemandFile file(path);
  std::filesystem::remove(dir.path() / "sub");  // gone between the check and the first line
  const std::string why = file.append("{}\n");
  EXPECT_NE(why.find(path.string()), std::string::npos) << why;
  EXPECT_NE(why.find("No such file or directory"), std::string::npos) << why;

  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "needs /dev/full";
  AppendOnDemandFile full("/dev/full");
  EXPECT_NE(full.append("{}\n").find("No space left on device"), std::string::npos);
}

}  // namespace
}  // namespace rulestream
