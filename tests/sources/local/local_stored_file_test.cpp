// LocalStorage::open_stored_file: a trial store's handle on one event file. Its reads are slices
// of the file's kept mapping found without a lookup by path, and otherwise read by path exactly
// as LocalStorage::read_range reads them: a file rewritten in place, cut short, or whose mapping
// left is read as it is now, and a path that climbs out of the trial fails at each read.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "core/model/exceptions.hpp"
#include "sources/local/local_storage.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using ::testing::HasSubstr;

std::string text_of(const SharedBytes& bytes) {
  return std::string(bytes.as_string_view());
}

// 128 KiB (more than the 64 KiB kept as a copy: mapped under a lease), each byte 'a' + i % 26.
std::string alphabet_file() {
  std::string content(128 << 10, ' ');
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>('a' + i % 26);
  return content;
}

// One such file, "events/e.tfevents", with the default threshold and capacity, opened before
// anything mapped it.
class LocalStoredFileTest : public ::testing::Test {
 protected:
  // Opening reads nothing: the file may be written after.
  LocalStoredFileTest() { testing::write_text_file(path(), content_); }
  std::filesystem::path path() const { return dir_.path() / "events/e.tfevents"; }
  // Maps it for later reads and keeps the mapping (as a pipeline's loader does).
  void map_and_keep() {
    ASSERT_TRUE(storage_.map_whole("events/e.tfevents", Storage::MapFor::LaterReads).has_value());
  }

  testing::TempDir dir_;
  const std::string content_ = alphabet_file();
  const LocalStorage storage_{dir_.path()};
  const std::unique_ptr<StoredFile> file_ = storage_.open_stored_file("events/e.tfevents");
};

TEST_F(LocalStoredFileTest, ReadsAreSlicesOfTheKeptMapping) {
  // Nothing kept yet: read by path (a copy).
  EXPECT_EQ(text_of(file_->read_range(26, 5)), "abcde");
  const auto whole = storage_.map_whole("events/e.tfevents", Storage::MapFor::LaterReads);
  ASSERT_TRUE(whole.has_value());
  const SharedBytes range = file_->read_range(1000, 30);
  EXPECT_TRUE(range.in_kept_mapping());
  EXPECT_EQ(range.data(), whole->data() + 1000);
  EXPECT_EQ(text_of(range), content_.substr(1000, 30));
  // Past the end: read_range's clamp, by path.
  EXPECT_EQ(text_of(file_->read_range(content_.size() - 3, 10)),
            content_.substr(content_.size() - 3));
  EXPECT_TRUE(file_->read_range(5, 0).empty());
}

// The writer opening the file breaks the mapping's lease: bytes read before keep what they held
// (a private copy moved in under them), and a read through the handle after sees the new bytes.
TEST_F(LocalStoredFileTest, AFileRewrittenInPlaceIsReadAsItIsNow) {
  map_and_keep();
  const SharedBytes before = file_->read_range(100, 8);
  ASSERT_TRUE(before.in_kept_mapping()) << "the test needs a leased mapping";
  {
    std::fstream out(path(), std::ios::in | std::ios::out | std::ios::binary);
    out.seekp(102);
    out.write("ZZZZ", 4);
  }
  EXPECT_EQ(text_of(before), content_.substr(100, 8));
  EXPECT_EQ(text_of(file_->read_range(100, 8)),
            content_.substr(100, 2) + "ZZZZ" + content_.substr(106, 2));
}

TEST_F(LocalStoredFileTest, AFileCutShortIsReadShortNotPastItsEnd) {
  map_and_keep();
  const SharedBytes held = file_->read_range(90'000, 10);
  std::filesystem::resize_file(path(), 50'000);
  EXPECT_EQ(text_of(held), content_.substr(90'000, 10)) << "held bytes keep what they held";
  EXPECT_TRUE(file_->read_range(90'000, 10).empty());
  EXPECT_EQ(text_of(file_->read_range(49'995, 10)), content_.substr(49'995, 5));
}

// Two kept mappings at most: a file whose mapping left is read through its handle as read_range
// reads it (copied, or mapped and kept again), with its own bytes.
TEST(LocalStoredFileEvictionTest, AFileWhoseMappingLeftIsReadAgain) {
  testing::TempDir dir;
  const LocalStorage storage(dir.path(), LocalStorage::kDefaultMapThreshold, 2);
  std::unique_ptr<StoredFile> files[3];
  for (int i = 0; i < 3; ++i) {
    const std::string path = "events/" + std::to_string(i) + ".tfevents";
    testing::write_text_file(dir.path() / path, std::string(128 << 10, static_cast<char>('0' + i)));
    files[i] = storage.open_stored_file(path);
    ASSERT_TRUE(storage.map_whole(path, Storage::MapFor::LaterReads).has_value());
  }
  // File 0's mapping left when file 2's was kept.
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(text_of(files[i]->read_range(1000, 4)), std::string(4, static_cast<char>('0' + i)))
          << "file " << i << ", round " << round;
    }
  }
}

TEST(LocalStoredFileByPathTest, MappingOffAndPathsOutsideTheTrialReadByPath) {
  testing::TempDir dir;
  testing::write_text_file(dir.path() / "events/e.tfevents", "0123456789");
  const LocalStorage copying(dir.path(), LocalStorage::kNeverMap);
  EXPECT_EQ(text_of(copying.open_stored_file("events/e.tfevents")->read_range(2, 3)), "234");
  const LocalStorage mapping(dir.path());
  // Opening checks nothing; each read fails as read_range fails, naming the path.
  const std::unique_ptr<StoredFile> outside = mapping.open_stored_file("../secret");
  try {
    outside->read_range(0, 1);
    ADD_FAILURE() << "no StorageError";
  } catch (const StorageError& error) {
    EXPECT_THAT(error.what(), HasSubstr("\"../secret\" is not inside the trial"));
  }
  const std::unique_ptr<StoredFile> missing = mapping.open_stored_file("events/nope.tfevents");
  try {
    missing->read_range(0, 1);
    ADD_FAILURE() << "no StorageError";
  } catch (const StorageError& error) {
    EXPECT_THAT(error.what(), HasSubstr("events/nope.tfevents"));
  }
}

}  // namespace
}  // namespace rulestream
