#include "sources/local/local_storage.hpp"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/model/exceptions.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> paths_of(const std::vector<StoredObject>& objects) {
  std::vector<std::string> paths;
  for (const auto& object : objects) paths.push_back(object.path);
  return paths;
}

std::string text_of(const SharedBytes& bytes) {
  return std::string(bytes.as_string_view());
}

std::string storage_error(const std::function<void()>& action) {
  try {
    action();
  } catch (const StorageError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no StorageError";
  return {};
}

// A trial folder in smdebug's layout, with files still being written (*.tmp) among them. Every
// test runs with reads copied (pread), mapped, and mapped only from one page up.
class LocalStorageTest : public ::testing::TestWithParam<std::uint64_t> {
 protected:
  void SetUp() override {
    for (const char* file : {
             "collections/000000000/worker_0_collections.json",
             "collections/000000000/worker_1_collections.json.tmp",
             "events/000000000000/000000000000_worker_0.tfevents",
             "events/000000000005/000000000005_worker_0.tfevents",
             "events/000000000005/000000000005_worker_1.tfevents.tmp",
             "index/000000000/000000000000_worker_0.json",
             "index/000000000/000000000005_worker_0.json",
             "index/000000000/000000000005_worker_1.json.tmp",
             "index/000000001/000000001000_worker_0.json",
             "index/000000001/000000001005_worker_0.json",
             "index/000000002/000000002000_worker_0.json",
             "index-notes.txt",
             "training_job_end.ts",
         }) {
      write(file, std::string("content of ") + file);
    }
    write("training_job_end.ts", "");
  }

  void write(const std::string& relative, std::string_view content) {
    testing::write_text_file(dir_.path() / relative, content);
  }

  testing::TempDir dir_;
  LocalStorage storage_{dir_.path(), GetParam()};
};

TEST_P(LocalStorageTest, ListsEverythingSortedWithoutTemporaryFiles) {
  EXPECT_THAT(paths_of(storage_.list("")),
              ElementsAre("collections/000000000/worker_0_collections.json",
                          "events/000000000000/000000000000_worker_0.tfevents",
                          "events/000000000005/000000000005_worker_0.tfevents", "index-notes.txt",
                          "index/000000000/000000000000_worker_0.json",
                          "index/000000000/000000000005_worker_0.json",
                          "index/000000001/000000001000_worker_0.json",
                          "index/000000001/000000001005_worker_0.json",
                          "index/000000002/000000002000_worker_0.json", "training_job_end.ts"));
}

TEST_P(LocalStorageTest, ListsUnderAPrefix) {
  EXPECT_THAT(paths_of(storage_.list("index/")),
              ElementsAre("index/000000000/000000000000_worker_0.json",
                          "index/000000000/000000000005_worker_0.json",
                          "index/000000001/000000001000_worker_0.json",
                          "index/000000001/000000001005_worker_0.json",
                          "index/000000002/000000002000_worker_0.json"));
  EXPECT_THAT(paths_of(storage_.list("index/000000001/")),
              ElementsAre("index/000000001/000000001000_worker_0.json",
                          "index/000000001/000000001005_worker_0.json"));
  // A prefix need not end at a folder boundary.
  EXPECT_THAT(paths_of(storage_.list("index/000000001/000000001005")),
              ElementsAre("index/000000001/000000001005_worker_0.json"));
  EXPECT_THAT(paths_of(storage_.list("index")),
              ElementsAre("index-notes.txt", "index/000000000/000000000000_worker_0.json",
                          "index/000000000/000000000005_worker_0.json",
                          "index/000000001/000000001000_worker_0.json",
                          "index/000000001/000000001005_worker_0.json",
                          "index/000000002/000000002000_worker_0.json"));
  EXPECT_THAT(paths_of(storage_.list("training_job_end.ts")), ElementsAre("training_job_end.ts"));
}

TEST_P(LocalStorageTest, ListsAfterAStartKey) {
  EXPECT_THAT(paths_of(storage_.list("index/", "index/000000000/000000000005_worker_0.json")),
              ElementsAre("index/000000001/000000001000_worker_0.json",
                          "index/000000001/000000001005_worker_0.json",
                          "index/000000002/000000002000_worker_0.json"));
  EXPECT_THAT(paths_of(storage_.list("index/", "index/000000001/")),
              ElementsAre("index/000000001/000000001000_worker_0.json",
                          "index/000000001/000000001005_worker_0.json",
                          "index/000000002/000000002000_worker_0.json"));
  EXPECT_THAT(paths_of(storage_.list("index/", "index/000000002/000000002000_worker_0.json")),
              ElementsAre());
  EXPECT_THAT(paths_of(storage_.list("index/000000000/", "index/000000001/")), ElementsAre());
}

TEST_P(LocalStorageTest, ListingAgreesWithFilteringTheWholeTree) {
  // Folders are pruned by prefix and start key; whatever is pruned must be what a plain filter
  // of the full listing drops.
  const auto all = storage_.list("");
  std::vector<std::string> probes = {"",
                                     "i",
                                     "index/",
                                     "index/000000001",
                                     "index/000000001/",
                                     "index/000000001/000000001005_worker_0.json",
                                     "index/1",
                                     "events/",
                                     "z",
                                     "index/000000000/000000000005_worker_0.jsonz"};
  for (const auto& object : all) probes.push_back(object.path);
  for (const auto& prefix : probes) {
    for (const auto& start_after : probes) {
      std::vector<std::string> expected;
      for (const auto& object : all) {
        if (object.path.starts_with(prefix) && object.path > start_after) {
          expected.push_back(object.path);
        }
      }
      EXPECT_EQ(paths_of(storage_.list(prefix, start_after)), expected)
          << "prefix '" << prefix << "' start_after '" << start_after << "'";
    }
  }
}

TEST_P(LocalStorageTest, ReportsSizeAndModificationTime) {
  const std::string path = "events/000000000005/000000000005_worker_0.tfevents";
  const timespec times[2] = {{1'700'000'000, 123'456'789}, {1'700'000'001, 987'654'321}};
  ASSERT_EQ(::utimensat(AT_FDCWD, (dir_.path() / path).c_str(), times, 0), 0);
  const auto objects = storage_.list(path);
  ASSERT_EQ(objects.size(), 1u);
  EXPECT_EQ(objects[0].size, std::string("content of ").size() + path.size());
  EXPECT_EQ(objects[0].modified_ns, 1'700'000'001'987'654'321);
  EXPECT_EQ(storage_.list("training_job_end.ts").at(0).size, 0u);
}

TEST_P(LocalStorageTest, MissingFoldersListAsEmpty) {
  EXPECT_TRUE(storage_.list("tensorboard/").empty());
  EXPECT_TRUE(storage_.list("index/000000099/").empty());
  EXPECT_TRUE(storage_.list("training_job_end.ts/").empty());  // a file, not a folder
  LocalStorage missing(dir_.path() / "no-such-trial");
  EXPECT_FALSE(missing.root_exists());
  EXPECT_TRUE(missing.list("").empty());
  EXPECT_TRUE(storage_.root_exists());
}

TEST_P(LocalStorageTest, FollowsLinkedFilesButNotLinkedFolders) {
  std::filesystem::create_symlink(dir_.path() / "index/000000000/000000000000_worker_0.json",
                                  dir_.path() / "index/000000002/000000002001_worker_0.json");
  std::filesystem::create_directory_symlink(dir_.path(), dir_.path() / "index/loop");
  std::filesystem::create_symlink(dir_.path() / "gone", dir_.path() / "index/dangling.json");
  const auto objects = storage_.list("index/000000002/");
  ASSERT_EQ(objects.size(), 2u);
  EXPECT_EQ(objects[1].path, "index/000000002/000000002001_worker_0.json");
  EXPECT_EQ(objects[1].size,
            std::string("content of index/000000000/000000000000_worker_0.json").size());
  EXPECT_THAT(paths_of(storage_.list("index/")),
              ::testing::Not(::testing::Contains(HasSubstr("loop"))));
  EXPECT_THAT(paths_of(storage_.list("index/")),
              ::testing::Not(::testing::Contains(HasSubstr("dangling"))));
}

// Links that lead to each other (b -> c -> b) are skipped: one such pair anywhere once stopped
// the listing of the whole folder with "Too many levels of symbolic links".
TEST_P(LocalStorageTest, LinksThatLoopAreSkippedAndTheRestIsListed) {
  std::filesystem::create_symlink("c", dir_.path() / "index/b");
  std::filesystem::create_symlink("b", dir_.path() / "index/c");
  const auto objects = storage_.list("index/");
  EXPECT_THAT(paths_of(objects), ::testing::Contains("index/000000000/000000000000_worker_0.json"));
  EXPECT_THAT(paths_of(objects), ::testing::Not(::testing::Contains(HasSubstr("index/b"))));
  EXPECT_THAT(paths_of(objects), ::testing::Not(::testing::Contains(HasSubstr("index/c"))));
}

TEST_P(LocalStorageTest, SkipsFifosWhenListing) {
  ASSERT_EQ(::mkfifo((dir_.path() / "index/000000000/000000000009_worker_0.json").c_str(), 0600),
            0);
  EXPECT_EQ(storage_.list("index/000000000/").size(), 2u);
}

TEST_P(LocalStorageTest, ExistsForFilesOnly) {
  EXPECT_TRUE(storage_.exists("training_job_end.ts"));
  EXPECT_TRUE(storage_.exists("index/000000000/000000000005_worker_1.json.tmp"));
  EXPECT_FALSE(storage_.exists("index/000000000"));
  EXPECT_FALSE(storage_.exists("index/000000000/000000000007_worker_0.json"));
  EXPECT_FALSE(storage_.exists("training_job_end.ts/x"));
}

TEST_P(LocalStorageTest, ReadsWholeFiles) {
  EXPECT_EQ(text_of(storage_.read("index/000000001/000000001005_worker_0.json")),
            "content of index/000000001/000000001005_worker_0.json");
  EXPECT_TRUE(storage_.read("training_job_end.ts").empty());
}

TEST_P(LocalStorageTest, ReadsLargeFilesIntact) {
  std::string content(5 << 20, '\0');
  for (std::size_t i = 0; i < content.size(); ++i)
    content[i] = static_cast<char>(i * 131 + (i >> 12));
  write("events/big.tfevents", content);
  EXPECT_EQ(text_of(storage_.read("events/big.tfevents")), content);
  EXPECT_EQ(text_of(storage_.read_range("events/big.tfevents", 3'000'001, 1'234'567)),
            content.substr(3'000'001, 1'234'567));
}

TEST_P(LocalStorageTest, ReadsRanges) {
  write("events/x.tfevents", "0123456789");
  EXPECT_EQ(text_of(storage_.read_range("events/x.tfevents", 2, 3)), "234");
  EXPECT_EQ(text_of(storage_.read_range("events/x.tfevents", 0, 10)), "0123456789");
  EXPECT_EQ(text_of(storage_.read_range("events/x.tfevents", 7, 10)), "789");  // short file
  EXPECT_TRUE(storage_.read_range("events/x.tfevents", 10, 4).empty());        // at EOF
  EXPECT_TRUE(storage_.read_range("events/x.tfevents", 11, 4).empty());        // after EOF
  EXPECT_TRUE(storage_.read_range("events/x.tfevents", 3, 0).empty());
  // A corrupt index entry asking for an absurd length gets what the file has.
  EXPECT_EQ(text_of(storage_.read_range("events/x.tfevents", 8, ~0ull)), "89");
  EXPECT_TRUE(storage_.read_range("events/x.tfevents", ~0ull - 1, ~0ull).empty());
}

TEST_P(LocalStorageTest, BytesOutliveTheStorage) {
  SharedBytes bytes;
  {
    LocalStorage other(dir_.path(), GetParam());
    bytes = other.read("index/000000000/000000000000_worker_0.json");
  }
  // Also once the file is gone: a mapping keeps the unlinked file alive.
  std::filesystem::remove(dir_.path() / "index/000000000/000000000000_worker_0.json");
  EXPECT_EQ(text_of(bytes), "content of index/000000000/000000000000_worker_0.json");
}

TEST_P(LocalStorageTest, ReadsConcurrently) {
  std::string content;
  for (int i = 0; i < 100'000; ++i) content += static_cast<char>('a' + i % 26);
  write("events/shared.tfevents", content);
  std::vector<std::thread> threads;
  std::vector<int> mismatches(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const std::uint64_t offset = static_cast<std::uint64_t>((t * 7919 + i * 104'729) % 99'000);
        if (text_of(storage_.read_range("events/shared.tfevents", offset, 1000)) !=
            content.substr(offset, 1000)) {
          ++mismatches[t];
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_THAT(mismatches, ::testing::Each(0));
}

TEST_P(LocalStorageTest, RandomAccessReadsFillTheCallersBuffer) {
  std::string content(300'000, '\0');
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>(i * 7 + i / 251);
  write("events/r.tfevents", content);
  const auto file = storage_.open_random_access("events/r.tfevents");
  ASSERT_NE(file, nullptr);
  std::vector<std::byte> buffer(100'000);
  ASSERT_EQ(file->read_at(123'457, buffer), buffer.size());
  EXPECT_EQ(std::string_view(reinterpret_cast<const char*>(buffer.data()), buffer.size()),
            std::string_view(content).substr(123'457, 100'000));
  // Fewer bytes only at the end of the file; none past it.
  EXPECT_EQ(file->read_at(250'000, buffer), 50'000u);
  EXPECT_EQ(std::string_view(reinterpret_cast<const char*>(buffer.data()), 50'000),
            std::string_view(content).substr(250'000));
  EXPECT_EQ(file->read_at(300'000, buffer), 0u);
  EXPECT_EQ(file->read_at(~0ull - 10, buffer), 0u);
  // The file as it is at each read: an append shows.
  {
    std::ofstream append(dir_.path() / "events/r.tfevents", std::ios::app | std::ios::binary);
    append << "tail";
  }
  EXPECT_EQ(file->read_at(300'000, buffer), 4u);
  EXPECT_EQ(std::string_view(reinterpret_cast<const char*>(buffer.data()), 4), "tail");
}

TEST_P(LocalStorageTest, RandomAccessOpensOnlyRegularFilesInTheTrial) {
  const std::string message =
      storage_error([&] { storage_.open_random_access("events/nope.tfevents"); });
  EXPECT_THAT(message, HasSubstr((dir_.path() / "events/nope.tfevents").string()));
  EXPECT_THAT(message, HasSubstr("No such file or directory"));
  EXPECT_THAT(storage_error([&] { storage_.open_random_access("index/000000000"); }),
              HasSubstr("not a regular file"));
  EXPECT_THAT(storage_error([&] { storage_.open_random_access("../outside"); }),
              HasSubstr("not inside the trial"));
}

TEST_P(LocalStorageTest, MissingFilesAreStorageErrorsNamingThePath) {
  const std::string message = storage_error([&] { storage_.read("events/nope.tfevents"); });
  EXPECT_THAT(message, HasSubstr((dir_.path() / "events/nope.tfevents").string()));
  EXPECT_THAT(message, HasSubstr("No such file or directory"));
  EXPECT_THAT(storage_error([&] { storage_.read_range("events/nope.tfevents", 0, 4); }),
              HasSubstr("events/nope.tfevents"));
}

TEST_P(LocalStorageTest, FoldersAndFifosAreNotReadable) {
  EXPECT_THAT(storage_error([&] { storage_.read("index/000000000"); }),
              HasSubstr("not a regular file"));
  // A fifo must fail at once rather than block waiting for a writer.
  ASSERT_EQ(::mkfifo((dir_.path() / "events/pipe").c_str(), 0600), 0);
  EXPECT_THAT(storage_error([&] { storage_.read("events/pipe"); }),
              HasSubstr("not a regular file"));
}

TEST_P(LocalStorageTest, UnreadableFilesAndFoldersAreStorageErrors) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: permissions are not enforced";
  const auto file = dir_.path() / "events/000000000000/000000000000_worker_0.tfevents";
  std::filesystem::permissions(file, std::filesystem::perms::none);
  const std::string message =
      storage_error([&] { storage_.read(file.lexically_relative(dir_.path()).string()); });
  EXPECT_THAT(message, HasSubstr(file.string()));
  EXPECT_THAT(message, HasSubstr("Permission denied"));

  const auto folder = dir_.path() / "index/000000001";
  std::filesystem::permissions(folder, std::filesystem::perms::none);
  EXPECT_THAT(storage_error([&] { storage_.list("index/"); }), HasSubstr("Permission denied"));
  std::filesystem::permissions(folder, std::filesystem::perms::owner_all);
}

TEST_P(LocalStorageTest, PathsMayNotLeaveTheTrial) {
  EXPECT_THAT(storage_error([&] { storage_.read("../etc/passwd"); }),
              HasSubstr("not inside the trial"));
  EXPECT_THAT(storage_error([&] { storage_.read("events/../../x"); }),
              HasSubstr("not inside the trial"));
  EXPECT_THAT(storage_error([&] { storage_.read_range("/etc/passwd", 0, 1); }),
              HasSubstr("not inside the trial"));
  EXPECT_THAT(storage_error([&] { storage_.exists(".."); }), HasSubstr("not inside the trial"));
  EXPECT_THAT(storage_error([&] { storage_.list("../"); }), HasSubstr("not inside the trial"));
  // Names that merely contain dots are fine.
  write("events/..hidden", "h");
  EXPECT_EQ(text_of(storage_.read("events/..hidden")), "h");
}

INSTANTIATE_TEST_SUITE_P(ReadModes, LocalStorageTest,
                         ::testing::Values(LocalStorage::kNeverMap, 1, 4096),
                         [](const ::testing::TestParamInfo<std::uint64_t>& param_info) {
                           return param_info.param == LocalStorage::kNeverMap
                                      ? std::string("Pread")
                                      : "MapFrom" + std::to_string(param_info.param);
                         });

// Bytes read are a snapshot, mapped or copied: a mapping is made under a read lease, and a
// writer opening the file breaks it, which puts a private copy of the mapped bytes in their
// place before the write goes on (sources/local/file_leases.hpp). This also shows which path
// each threshold takes.
TEST(LocalStorageMappingTest, InPlaceRewritesDoNotReachBytesReadBefore) {
  testing::TempDir dir;
  const std::string big(8192, 'a');
  testing::write_text_file(dir.path() / "events/e.tfevents", big);
  const LocalStorage copying(dir.path(), LocalStorage::kNeverMap);
  const LocalStorage mapping(dir.path(), 4096);
  const SharedBytes copied = copying.read("events/e.tfevents");
  const SharedBytes mapped = mapping.read("events/e.tfevents");
  const SharedBytes small_range = mapping.read_range("events/e.tfevents", 100, 10);  // < 4096
  {
    std::fstream file(dir.path() / "events/e.tfevents",
                      std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(100);
    file.write("ZZZZ", 4);
  }
  EXPECT_EQ(text_of(copied), big);
  EXPECT_EQ(text_of(small_range), "aaaaaaaaaa");
  EXPECT_TRUE(text_of(mapped) == big) << text_of(mapped).substr(98, 8);
  EXPECT_EQ(text_of(mapping.read("events/e.tfevents")).substr(98, 8), "aaZZZZaa");
}

// map_whole keeps the file mapped: ranges of it are then slices of that mapping (whatever their
// size), until the file grows past it; with mapping off there is no mapping to keep.
TEST(LocalStorageMappingTest, RangesOfAKeptMappingAreSlicesOfIt) {
  testing::TempDir dir;
  std::string content(10'000, 'a');
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>('a' + i % 26);
  testing::write_text_file(dir.path() / "events/e.tfevents", content);
  const LocalStorage storage(dir.path());  // the default threshold: 4 MiB

  const auto whole = storage.map_whole("events/e.tfevents", Storage::MapFor::ReadingNow);
  ASSERT_TRUE(whole.has_value());
  EXPECT_TRUE(whole->in_kept_mapping());
  EXPECT_EQ(text_of(*whole), content);
  const SharedBytes range = storage.read_range("events/e.tfevents", 100, 10);
  EXPECT_TRUE(range.in_kept_mapping());
  EXPECT_EQ(range.data(), whole->data() + 100);
  EXPECT_EQ(text_of(range), content.substr(100, 10));
  // Past the mapped end: read from the file as it is now.
  {
    std::ofstream file(dir.path() / "events/e.tfevents", std::ios::app | std::ios::binary);
    file << "0123456789";
  }
  EXPECT_EQ(text_of(storage.read_range("events/e.tfevents", 9'995, 10)),
            content.substr(9'995) + "01234");
  EXPECT_TRUE(storage.read_range("events/e.tfevents", 10'020, 4).empty());

  testing::write_text_file(dir.path() / "events/empty.tfevents", "");
  EXPECT_TRUE(
      storage.map_whole("events/empty.tfevents", Storage::MapFor::ReadingNow).value().empty());
  EXPECT_THAT(storage_error(
                  [&] { storage.map_whole("events/nope.tfevents", Storage::MapFor::ReadingNow); }),
              HasSubstr("events/nope.tfevents"));
  EXPECT_FALSE(LocalStorage(dir.path(), LocalStorage::kNeverMap)
                   .map_whole("events/e.tfevents", Storage::MapFor::ReadingNow)
                   .has_value());
}

// KiB of the mapping holding `address` that are resident in this process's page table, as
// /proc/self/smaps counts them; nullopt when it cannot tell.
std::optional<long> mapped_kib(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &begin, &end) == 2 &&
        line.find(':') > line.find(' ')) {
      inside = begin <= at && at < end;
    } else if (inside && line.rfind("Rss:", 0) == 0) {
      return std::stol(line.substr(4));
    }
  }
  return std::nullopt;
}

// A file mapped for reading now has its pages mapped at once; one kept for later reads maps
// only the pages those reads touch (a pipeline keeps files whose values its rules may not all
// read).
TEST(LocalStorageMappingTest, AMappingKeptForLaterReadsMapsOnlyThePagesRead) {
  testing::TempDir dir;
  const std::string content(1'000'000, 'p');  // past the 64 KiB a copy is kept for
  testing::write_text_file(dir.path() / "events/now.tfevents", content);
  testing::write_text_file(dir.path() / "events/later.tfevents", content);
  const LocalStorage storage(dir.path());
  const auto now = storage.map_whole("events/now.tfevents", Storage::MapFor::ReadingNow);
  const auto later = storage.map_whole("events/later.tfevents", Storage::MapFor::LaterReads);
  ASSERT_TRUE(now.has_value());
  ASSERT_TRUE(later.has_value());
  EXPECT_TRUE(later->in_kept_mapping());
  const auto now_kib = mapped_kib(now->data());
  const auto later_kib = mapped_kib(later->data());
  if (!now_kib || !later_kib) GTEST_SKIP() << "/proc/self/smaps does not list the mappings";
  EXPECT_GE(*now_kib, 976) << "every page of the file";
  EXPECT_LT(*later_kib, 976 / 2) << "at most what was read (fault-around)";
  // Reading it maps what is read, and the bytes are the file's.
  EXPECT_EQ(text_of(*later), content);
  EXPECT_GE(mapped_kib(later->data()).value_or(0), 976);
}

// Storage keeps a small file whole as a copy (mapping and unmapping it would cost more than
// reading it) and a larger one as a mapping; both serve later ranges as slices of what is kept.
// Neither shows an in-place rewrite in the bytes handed out: the writer broke the mapping's
// lease, and a private copy took the file's place. Only the mapping then leaves, so that later
// reads see the rewrite; the small copy is not leased (local_storage.hpp).
TEST(LocalStorageMappingTest, SmallFilesAreKeptAsCopiesLargerOnesAsMappings) {
  testing::TempDir dir;
  const std::string small(4'000, 's');
  const std::string large(200'000, 'l');  // past the 64 KiB a copy is kept for
  testing::write_text_file(dir.path() / "events/small.tfevents", small);
  testing::write_text_file(dir.path() / "events/large.tfevents", large);
  const LocalStorage storage(dir.path());
  const auto small_kept = storage.map_whole("events/small.tfevents", Storage::MapFor::ReadingNow);
  const auto large_kept = storage.map_whole("events/large.tfevents", Storage::MapFor::ReadingNow);
  ASSERT_TRUE(small_kept.has_value());
  ASSERT_TRUE(large_kept.has_value());
  EXPECT_TRUE(small_kept->in_kept_mapping());
  EXPECT_TRUE(large_kept->in_kept_mapping());
  EXPECT_EQ(storage.read_range("events/small.tfevents", 10, 5).data(), small_kept->data() + 10);
  EXPECT_EQ(storage.read_records_range("events/large.tfevents", 100, 50).data(),
            large_kept->data() + 100);

  for (const char* name : {"events/small.tfevents", "events/large.tfevents"}) {
    std::fstream file(dir.path() / name, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(1'000);
    file.write("ZZZZ", 4);
  }
  EXPECT_EQ(text_of(*small_kept).substr(998, 8), "ssssssss") << "a copy";
  EXPECT_EQ(text_of(*large_kept).substr(998, 8), "llllllll") << "a mapping";
  EXPECT_EQ(text_of(storage.read_range("events/small.tfevents", 998, 8)), "ssssssss");
  EXPECT_EQ(text_of(storage.read_range("events/large.tfevents", 998, 8)), "llZZZZll");
}

// A file read by range a second time lately is mapped whole and kept (rules reading a step's
// values record by record from a trial no pipeline maps); one read of a file stays a copy.
TEST(LocalStorageMappingTest, AFileReadByRangeTwiceIsMappedAndKept) {
  testing::TempDir dir;
  const std::string content = "0123456789abcdefghij";
  testing::write_text_file(dir.path() / "events/e.tfevents", content);
  testing::write_text_file(dir.path() / "events/f.tfevents", content);
  const LocalStorage storage(dir.path());
  const SharedBytes first = storage.read_range("events/e.tfevents", 2, 3);
  EXPECT_FALSE(first.in_kept_mapping());
  EXPECT_FALSE(storage.read_range("events/f.tfevents", 2, 3).in_kept_mapping());
  const SharedBytes second = storage.read_range("events/e.tfevents", 10, 4);
  EXPECT_TRUE(second.in_kept_mapping());
  EXPECT_EQ(text_of(second), "abcd");
  const SharedBytes third = storage.read_range("events/e.tfevents", 0, 2);
  EXPECT_TRUE(third.in_kept_mapping());
  EXPECT_EQ(third.data() + 10, second.data()) << "one mapping serves both";
  EXPECT_EQ(text_of(first), "234");
  // Mapping off: copies, however often.
  const LocalStorage copying(dir.path(), LocalStorage::kNeverMap);
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(copying.read_range("events/e.tfevents", 2, 3).in_kept_mapping());
  }
}

// A reader cutting many records out of one range (Trial::values_at) gets a slice of the file's
// kept mapping when storage keeps one. Otherwise the range is copied into a buffer storage hands
// out again once nothing holds it, and a range past kLargestRecycledRead maps the file and keeps
// it. A range the file does not hold is cut short, as read_range cuts it; with mapping off it is
// a plain copy.
TEST(LocalStorageMappingTest, RecordRangesAreRecycledCopiesUnlessTheFileIsMapped) {
  testing::TempDir dir;
  const std::string content = "0123456789abcdefghij";
  testing::write_text_file(dir.path() / "events/e.tfevents", content);
  const LocalStorage storage(dir.path());

  const std::byte* first_buffer = nullptr;
  {
    const SharedBytes records = storage.read_records_range("events/e.tfevents", 4, 8);
    EXPECT_TRUE(records.recycled());
    EXPECT_TRUE(records.from_local_file());
    EXPECT_FALSE(records.in_kept_mapping()) << "the file is not mapped for it";
    EXPECT_EQ(text_of(records), "456789ab");
    first_buffer = records.data();
    const SharedBytes whole = storage.read_records_range("events/e.tfevents", 0, 20);
    EXPECT_NE(whole.data(), records.data()) << "a held buffer is not handed out again";
    EXPECT_EQ(text_of(whole), content);
    EXPECT_EQ(text_of(records), "456789ab");
  }
  const SharedBytes reused = storage.read_records_range("events/e.tfevents", 2, 4);
  EXPECT_EQ(reused.data(), first_buffer) << "let go of, the buffer is read into again";
  EXPECT_EQ(text_of(reused), "2345");

  const SharedBytes past_end = storage.read_records_range("events/e.tfevents", 15, 10);
  EXPECT_EQ(text_of(past_end), "fghij");
  EXPECT_THAT(storage_error([&] { storage.read_records_range("events/nope.tfevents", 0, 4); }),
              HasSubstr("events/nope.tfevents"));
  EXPECT_THAT(storage_error([&] { storage.read_records_range("../outside", 0, 4); }),
              HasSubstr("not inside the trial"));

  // Once the file is mapped and kept (a pipeline keeping it for its rules), ranges slice it.
  const auto kept = storage.map_whole("events/e.tfevents", Storage::MapFor::LaterReads);
  ASSERT_TRUE(kept.has_value());
  const SharedBytes sliced = storage.read_records_range("events/e.tfevents", 4, 8);
  EXPECT_EQ(sliced.data(), kept->data() + 4);
  EXPECT_FALSE(sliced.recycled());

  // A range too large to copy maps the file, and later ranges slice that mapping.
  const std::string large(LocalStorage::kLargestRecycledRead + 4096, 'l');
  testing::write_text_file(dir.path() / "events/large.tfevents", large);
  const SharedBytes large_range = storage.read_records_range(
      "events/large.tfevents", 0, LocalStorage::kLargestRecycledRead + 1);
  EXPECT_TRUE(large_range.in_kept_mapping());
  EXPECT_EQ(storage.read_records_range("events/large.tfevents", 10, 5).data(),
            large_range.data() + 10);

  const LocalStorage copying(dir.path(), LocalStorage::kNeverMap);
  const SharedBytes copied = copying.read_records_range("events/e.tfevents", 4, 8);
  EXPECT_FALSE(copied.in_kept_mapping());
  EXPECT_FALSE(copied.recycled());
  EXPECT_EQ(text_of(copied), "456789ab");
}

TEST(LocalStorageSamplesTest, ListsAndReadsASampleTrial) {
  const auto samples = testing::samples_dir();
  if (!samples) GTEST_SKIP() << "smdebug-samples not found (set RULESTREAM_SAMPLES)";
  const LocalStorage storage(*samples / "trials/pt-mlp-basic");
  EXPECT_EQ(storage.describe(), (*samples / "trials/pt-mlp-basic").string());
  const auto index_files = storage.list("index/");
  EXPECT_EQ(index_files.size(), 200u);
  EXPECT_TRUE(std::is_sorted(index_files.begin(), index_files.end(),
                             [](const auto& a, const auto& b) { return a.path < b.path; }));
  EXPECT_EQ(storage.list("collections/").size(), 1u);
  EXPECT_TRUE(storage.exists("training_job_end.ts"));
  const auto first = storage.list("events/").front();
  EXPECT_EQ(storage.read(first.path).size(), first.size);
}

}  // namespace
}  // namespace rulestream
