// LocalStorage maps a file only under a read lease (sources/local/file_leases.hpp): a file open
// for writing, or one this process may not lease, is read by copy; a mapped file that another
// process cuts short and writes again leaves the bytes already handed out as they were (they
// used to raise SIGBUS when touched), and later reads see the file as it is. Whether a read was
// mapped is told by /proc/self/maps, which names every mapped file.

#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "sources/local/local_storage.hpp"
#include "tests/support/lease_probe.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

constexpr const char* kEventFile = "events/e.tfevents";

// 5 MiB, past LocalStorage's 4 MiB mapping threshold, every 4 KiB page different from the next
// (so that a page read from the wrong place shows).
std::string large_content(char first) {
  std::string content(std::size_t{5} << 20, '\0');
  for (std::size_t i = 0; i < content.size(); ++i) {
    content[i] = static_cast<char>(first + (i / 4096 + i) % 23);
  }
  return content;
}

// Whether `bytes` are `expected`; on failure, where they first differ (not megabytes of both).
::testing::AssertionResult holds(const SharedBytes& bytes, std::string_view expected) {
  const std::string_view actual = bytes.as_string_view();
  if (actual == expected) return ::testing::AssertionSuccess();
  const auto differ = std::mismatch(actual.begin(), actual.end(), expected.begin(), expected.end());
  return ::testing::AssertionFailure()
         << actual.size() << " bytes where " << expected.size() << " were expected; first"
         << " difference at offset " << (differ.first - actual.begin());
}

class FileLeasesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::folder_grants_leases(dir_.path())) {
      GTEST_SKIP() << dir_.path() << "'s file system grants no leases: LocalStorage copies there";
    }
    file_ = dir_.path() / kEventFile;
    testing::write_text_file(file_, original_);
  }

  testing::TempDir dir_;
  std::filesystem::path file_;
  const std::string original_ = large_content('a');
};

// The control for the tests below: a large file nobody writes is mapped, whole and by range
// (were leases unavailable here, it would be copied, and this test fails).
TEST_F(FileLeasesTest, AFileNobodyWritesIsMapped) {
  const LocalStorage storage(dir_.path());
  const SharedBytes whole = storage.read(kEventFile);
  EXPECT_TRUE(testing::is_mapped_into_this_process(file_));
  EXPECT_TRUE(holds(whole, original_));
  const auto kept = storage.map_whole(kEventFile, Storage::MapFor::LaterReads);
  ASSERT_TRUE(kept.has_value());
  EXPECT_TRUE(kept->in_kept_mapping());
  EXPECT_EQ(storage.read_range(kEventFile, 4096, 10).data(), kept->data() + 4096);
}

// While the file is open for writing (here by this process: the kernel refuses the lease to
// anyone while any process has it open so), it is read by copy, and nothing is kept for it.
TEST_F(FileLeasesTest, AFileOpenForWritingIsReadByCopy) {
  const LocalStorage storage(dir_.path());
  {
    std::ofstream writer(file_, std::ios::app | std::ios::binary);
    ASSERT_TRUE(writer.is_open());
    const SharedBytes whole = storage.read(kEventFile);
    EXPECT_FALSE(testing::is_mapped_into_this_process(file_));
    EXPECT_TRUE(holds(whole, original_));
    const SharedBytes range = storage.read_range(kEventFile, 1'000'000, std::size_t{4} << 20);
    EXPECT_FALSE(testing::is_mapped_into_this_process(file_));
    EXPECT_TRUE(holds(range, original_.substr(1'000'000, std::size_t{4} << 20)));
    EXPECT_FALSE(storage.map_whole(kEventFile, Storage::MapFor::LaterReads).has_value());
    const SharedBytes records = storage.read_records_range(kEventFile, 0, original_.size());
    EXPECT_FALSE(testing::is_mapped_into_this_process(file_));
    EXPECT_FALSE(records.in_kept_mapping());
    EXPECT_TRUE(holds(records, original_));
  }
  // Closed, it is mapped again.
  const SharedBytes whole = storage.read(kEventFile);
  EXPECT_TRUE(testing::is_mapped_into_this_process(file_));
  EXPECT_TRUE(holds(whole, original_));
}

// Another process cuts a mapped file short (it waits until this process lets go of its lease),
// then the file is written again in place with other content: the bytes handed out before keep
// what they held, at the same addresses, in memory of this process's own (the file is no longer
// mapped), and later reads, of the kept mapping's path too, see the new content.
TEST_F(FileLeasesTest, AMappedFileCutShortByAnotherProcessLeavesTheHeldBytesIntact) {
  const LocalStorage storage(dir_.path());
  const SharedBytes whole = storage.read(kEventFile);
  const auto kept = storage.map_whole(kEventFile, Storage::MapFor::LaterReads);
  ASSERT_TRUE(kept.has_value());
  const SharedBytes slice = storage.read_range(kEventFile, 8192, 100);
  ASSERT_EQ(slice.data(), kept->data() + 8192) << "a slice of the kept mapping";
  ASSERT_TRUE(testing::is_mapped_into_this_process(file_));

  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(::truncate(file_.c_str(), 0) == 0 ? 0 : 1);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child could not truncate";
  EXPECT_EQ(std::filesystem::file_size(file_), 0u);
  EXPECT_FALSE(testing::is_mapped_into_this_process(file_)) << "replaced by private copies";
  // Touches every page, past the file's end now: SIGBUS before leases.
  EXPECT_TRUE(holds(whole, original_));
  EXPECT_TRUE(holds(*kept, original_));
  EXPECT_EQ(storage.read_range(kEventFile, 8192, 100).size(), 0u) << "the file as it is";

  const std::string rewritten = large_content('n');
  testing::write_text_file(file_, rewritten);
  EXPECT_TRUE(holds(whole, original_));
  EXPECT_TRUE(holds(slice, original_.substr(8192, 100)));
  EXPECT_TRUE(holds(storage.read_range(kEventFile, 8192, 100), rewritten.substr(8192, 100)));
  EXPECT_TRUE(holds(storage.read(kEventFile), rewritten));
}

// This thread, for as long as it lives, as a user who does not own the files root made, and
// without CAP_LEASE: the kernel then refuses it leases on them (EACCES). Credentials are the
// thread's own: setfsuid and capset change only the calling thread. Needs root.
class NotTheFilesOwner {
 public:
  NotTheFilesOwner() {
    ::setfsuid(kNobody);  // also drops the file-system capabilities (CAP_DAC_OVERRIDE, ...)
    header_.version = _LINUX_CAPABILITY_VERSION_3;
    header_.pid = 0;
    if (::syscall(SYS_capget, &header_, saved_) != 0) throw std::runtime_error("capget");
    __user_cap_data_struct without[2] = {saved_[0], saved_[1]};
    without[CAP_TO_INDEX(CAP_LEASE)].effective &= ~CAP_TO_MASK(CAP_LEASE);
    if (::syscall(SYS_capset, &header_, without) != 0) throw std::runtime_error("capset");
  }
  ~NotTheFilesOwner() {
    ::syscall(SYS_capset, &header_, saved_);
    ::setfsuid(0);
  }
  NotTheFilesOwner(const NotTheFilesOwner&) = delete;
  NotTheFilesOwner& operator=(const NotTheFilesOwner&) = delete;

  static constexpr uid_t kNobody = 65534;

 private:
  __user_cap_header_struct header_{};
  __user_cap_data_struct saved_[2]{};
};

// Where this process may not lease the file (it neither owns it nor has CAP_LEASE; a file
// system without leases, such as NFS, refuses it alike), reads copy and the bytes are right.
TEST_F(FileLeasesTest, WithoutALeaseFilesAreReadByCopy) {
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root, to read a file as a user who does not own it";
  }
  // Readable by others, as the user the reads run as.
  for (std::filesystem::path folder = file_.parent_path(); folder != dir_.path().parent_path();
       folder = folder.parent_path()) {
    std::filesystem::permissions(
        folder, std::filesystem::perms::others_read | std::filesystem::perms::others_exec,
        std::filesystem::perm_options::add);
  }
  const LocalStorage storage(dir_.path());
  {
    const NotTheFilesOwner not_the_owner;
    const SharedBytes whole = storage.read(kEventFile);
    EXPECT_FALSE(testing::is_mapped_into_this_process(file_));
    EXPECT_TRUE(holds(whole, original_));
    EXPECT_FALSE(storage.map_whole(kEventFile, Storage::MapFor::LaterReads).has_value());
    const SharedBytes records = storage.read_records_range(kEventFile, 0, original_.size());
    EXPECT_FALSE(testing::is_mapped_into_this_process(file_));
    EXPECT_TRUE(holds(records, original_));
  }
  // Back as root, the same storage maps it: what refused the mapping was the lease.
  const SharedBytes whole = storage.read(kEventFile);
  EXPECT_TRUE(testing::is_mapped_into_this_process(file_));
  EXPECT_TRUE(holds(whole, original_));
}

}  // namespace
}  // namespace rulestream
