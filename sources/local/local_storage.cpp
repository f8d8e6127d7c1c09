#include "sources/local/local_storage.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <utility>

#include "core/model/exceptions.hpp"
#include "sources/common/relative_path.hpp"
#include "sources/local/file_leases.hpp"

namespace rulestream {
namespace {

std::string error_text(int error) {
  return std::generic_category().message(error);
}

[[noreturn]] void throw_io_error(std::string_view action, const std::string& full_path, int error) {
  throw StorageError("cannot " + std::string(action) + " " + full_path + ": " + error_text(error));
}

// Closes on scope exit; descriptors are never shared between calls, which is what makes
// concurrent reads safe without locks.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

struct DirectoryCloser {
  void operator()(DIR* directory) const { ::closedir(directory); }
};
using DirectoryHandle = std::unique_ptr<DIR, DirectoryCloser>;

// "<root>/<relative>", without doubling a '/' the root already ends with.
std::string full_path_of(const std::filesystem::path& root, std::string_view relative) {
  std::string full = root.string();
  if (!full.empty() && full.back() != '/' && !relative.empty()) full += '/';
  full += relative;
  return full;
}

bool is_absent(int error) {
  return error == ENOENT || error == ENOTDIR;
}

// O_NONBLOCK: opening a fifo for reading would otherwise wait for a writer forever; the
// regular-file check that follows then rejects it. Regular files ignore the flag.
int open_file(const std::string& full_path) {
  int fd;
  do {
    fd = ::open(full_path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) throw_io_error("open", full_path, errno);
  return fd;
}

// Reads up to `length` bytes at `offset` into `buffer`; fewer only at the end of the file.
std::size_t pread_fully(int fd, std::byte* buffer, std::size_t length, std::uint64_t offset,
                        const std::string& full_path) {
  std::size_t done = 0;
  while (done < length) {
    const ssize_t got =
        ::pread(fd, buffer + done, length - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      throw_io_error("read", full_path, errno);
    }
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  return done;
}

// Reads [offset, offset + length) into one allocation that SharedBytes then owns: no copy,
// and no zero-fill of bytes that are about to be overwritten.
SharedBytes read_into_shared_buffer(int fd, std::size_t length, std::uint64_t offset,
                                    const std::string& full_path) {
  std::shared_ptr<std::byte[]> buffer = std::make_shared_for_overwrite<std::byte[]>(length);
  const std::size_t got = pread_fully(fd, buffer.get(), length, offset, full_path);
  const std::span<const std::byte> bytes(buffer.get(), got);
  return SharedBytes(std::move(buffer), bytes);
}

// The whole file as a copy storage keeps for further reads, as it keeps a mapping
// (SharedBytes::of_kept_mapping): for files too small to be worth mapping.
SharedBytes read_kept_copy(int fd, std::size_t size, const std::string& full_path) {
  std::shared_ptr<std::byte[]> buffer = std::make_shared_for_overwrite<std::byte[]>(size);
  const std::size_t got = pread_fully(fd, buffer.get(), size, 0, full_path);
  const std::span<const std::byte> bytes(buffer.get(), got);
  return SharedBytes::of_kept_mapping(std::move(buffer), bytes);
}

// The largest file whose pages a reader of most of it has mapped at once (MAP_POPULATE): a
// larger one's pages would all count in the process's memory at once.
constexpr std::uint64_t kPopulateLimit = std::uint64_t{64} << 20;

// The largest file storage keeps as a copy rather than a mapping. Mapping a file, and unmapping
// it when it leaves (a TLB shootdown on every core), cost about 32 us per 1.8 KB file on the
// development VM: 14% of an all-rules replay's samples, where reading the files instead took the
// replay from about 2 s to 1.2 s. Below glibc's first mmap threshold (128 KiB), so the copies
// come from the heap, not from mappings of their own.
constexpr std::uint64_t kKeptCopyLimit = std::uint64_t{64} << 10;

// Maps [offset, offset + length), which must lie within the file, read-only, under a read lease
// (LeasedMapping: the file cannot change under the mapping). nullopt where the file cannot be
// leased or mapped. The mapping lives as long as any SharedBytes made from it.
std::optional<SharedBytes> map_range(int fd, std::uint64_t offset, std::size_t length) {
  static const auto page_size = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t aligned_offset = offset - offset % page_size;
  const auto lead = static_cast<std::size_t>(offset - aligned_offset);
  std::shared_ptr<const LeasedMapping> mapping =
      LeasedMapping::map(fd, aligned_offset, lead + length, false);
  if (!mapping) return std::nullopt;
  const std::span<const std::byte> bytes = mapping->bytes().subspan(lead, length);
  return SharedBytes(std::move(mapping), bytes);
}

std::int64_t modified_ns(const struct stat& status) {
  return static_cast<std::int64_t>(status.st_mtim.tv_sec) * 1'000'000'000 + status.st_mtim.tv_nsec;
}

// The size of an open file, which must be a regular one (not a folder, fifo or device).
std::uint64_t regular_file_size(int fd, const std::string& full_path) {
  struct stat status {};
  if (::fstat(fd, &status) != 0) throw_io_error("stat", full_path, errno);
  if (!S_ISREG(status.st_mode)) {
    throw StorageError("cannot read " + full_path + ": not a regular file");
  }
  return static_cast<std::uint64_t>(status.st_size);
}

// pread on a descriptor of its own: concurrent reads need no lock.
class LocalRandomAccessFile final : public RandomAccessFile {
 public:
  explicit LocalRandomAccessFile(std::string full_path)
      : full_path_(std::move(full_path)), file_(open_file(full_path_)) {
    regular_file_size(file_.get(), full_path_);  // refuses a folder or a fifo, as read() does
  }
  std::size_t read_at(std::uint64_t offset, std::span<std::byte> buffer) const override {
    // No file reaches past off_t's range: a corrupt index's offset there reads nothing, where
    // pread would refuse it.
    constexpr auto kLimit = static_cast<std::uint64_t>(std::numeric_limits<off_t>::max());
    if (offset >= kLimit) return 0;
    const auto length =
        static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), kLimit - offset));
    return pread_fully(file_.get(), buffer.data(), length, offset, full_path_);
  }

 private:
  std::string full_path_;
  FileDescriptor file_;
};

void report_skipped_link(const std::string& path) {
  static std::mutex mutex;
  static std::set<std::string> reported;
  const std::lock_guard lock(mutex);
  if (!reported.insert(path).second) return;
  std::cerr << "rulestream: skipping " << path
            << ": a symbolic link that loops (too many levels of links)\n";
}

// One listing: what to keep, and where to put it.
class TreeWalk {
 public:
  TreeWalk(std::string_view prefix, std::string_view start_after, std::vector<StoredObject>& out)
      : prefix_(prefix), start_after_(start_after), out_(out) {}

  // `relative` is the folder's path in the trial with a trailing '/' ("" for the root).
  void walk(int fd, const std::string& relative, const std::string& full_path) const {
    DirectoryHandle directory(::fdopendir(fd));
    if (!directory) {
      const int error = errno;
      ::close(fd);
      throw_io_error("list", full_path, error);
    }
    const int directory_fd = ::dirfd(directory.get());
    while (true) {
      errno = 0;
      const dirent* entry = ::readdir(directory.get());
      if (entry == nullptr) {
        if (errno != 0) throw_io_error("list", full_path, errno);
        return;
      }
      const std::string_view name = entry->d_name;
      if (name == "." || name == "..") continue;
      visit(directory_fd, *entry, relative + std::string(name), full_path);
    }
  }

  // Whether a folder ("index/000000001/") can hold a path we list: it must agree with the
  // prefix, and not lie wholly at or before start_after (then every path in it sorts before).
  bool may_hold_matches(std::string_view folder) const {
    if (!folder.starts_with(prefix_) && !prefix_.starts_with(folder)) return false;
    return start_after_.starts_with(folder) || folder > start_after_;
  }

 private:
  void visit(int directory_fd, const dirent& entry, std::string relative,
             const std::string& parent_full_path) const {
    struct stat status {};
    bool have_status = false;
    unsigned char type = entry.d_type;
    const bool is_link = type == DT_LNK;
    if (type == DT_UNKNOWN || is_link) {
      // The file may be renamed or removed while we look (a .tmp becoming final): skip it.
      if (::fstatat(directory_fd, entry.d_name, &status, 0) != 0) {
        if (is_absent(errno)) return;
        // A link that loops (b -> c -> b) leads nowhere: one such link anywhere must not stop
        // the listing of everything else. Said once per process and path.
        if (is_link && errno == ELOOP) {
          report_skipped_link(parent_full_path + "/" + entry.d_name);
          return;
        }
        throw_io_error("stat", parent_full_path + "/" + entry.d_name, errno);
      }
      have_status = true;
      type = S_ISDIR(status.st_mode) ? DT_DIR : S_ISREG(status.st_mode) ? DT_REG : DT_UNKNOWN;
    }

    if (type == DT_DIR) {
      // Linked folders are not followed: a link to an ancestor would never end.
      if (is_link) return;
      relative += '/';
      if (!may_hold_matches(relative)) return;
      const std::string full_path = parent_full_path + "/" + entry.d_name;
      const int fd =
          ::openat(directory_fd, entry.d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) {
        if (is_absent(errno)) return;
        throw_io_error("open", full_path, errno);
      }
      walk(fd, relative, full_path);
      return;
    }
    if (type != DT_REG || !wanted(relative)) return;  // fifos, sockets: not trial files
    if (!have_status && ::fstatat(directory_fd, entry.d_name, &status, 0) != 0) {
      if (is_absent(errno)) return;
      throw_io_error("stat", parent_full_path + "/" + entry.d_name, errno);
    }
    if (!S_ISREG(status.st_mode)) return;
    out_.push_back({.path = std::move(relative),
                    .size = static_cast<std::uint64_t>(status.st_size),
                    .modified_ns = modified_ns(status),
                    .identity = static_cast<std::uint64_t>(status.st_ino)});
  }

  bool wanted(std::string_view relative) const {
    return relative.starts_with(prefix_) && relative > start_after_ && !relative.ends_with(".tmp");
  }

  std::string_view prefix_;
  std::string_view start_after_;
  std::vector<StoredObject>& out_;
};

// LocalStorage::open_stored_file's handle.
class LocalStoredFile final : public StoredFile {
 public:
  LocalStoredFile(const LocalStorage& storage, std::string_view path, MappedFiles::Handle kept)
      : storage_(storage), path_(path), kept_(std::move(kept)) {}

  SharedBytes read_range(std::uint64_t offset, std::uint64_t length) const override {
    if (length > 0) {
      if (auto slice = kept_.slice(offset, length)) return std::move(*slice);
    }
    return storage_.read_range(path_, offset, length);
  }

 private:
  const LocalStorage& storage_;
  std::string path_;
  MappedFiles::Handle kept_;
};

}  // namespace

LocalStorage::LocalStorage(std::filesystem::path root, std::uint64_t map_threshold,
                           std::size_t kept_mappings)
    : root_(std::move(root)),
      map_threshold_(map_threshold),
      mapped_files_(map_threshold == kNeverMap ? nullptr
                                               : std::make_unique<MappedFiles>(kept_mappings)) {}

std::string LocalStorage::describe() const {
  return root_.string();
}

bool LocalStorage::root_exists() const {
  std::error_code error;
  return std::filesystem::is_directory(root_, error);
}

std::vector<StoredObject> LocalStorage::list(std::string_view prefix,
                                             std::string_view start_after) const {
  check_relative_path(prefix, root_.string());
  // Start at the deepest folder the prefix names, not at the root: a poll of one index bucket
  // should not read the whole trial.
  const std::size_t last_slash = prefix.rfind('/');
  const std::string_view start_folder =
      last_slash == std::string_view::npos ? std::string_view() : prefix.substr(0, last_slash + 1);
  std::string full_path = full_path_of(root_, start_folder);
  if (!start_folder.empty()) full_path.pop_back();  // messages name the folder without a '/'

  std::vector<StoredObject> objects;
  const TreeWalk walk(prefix, start_after, objects);
  if (!walk.may_hold_matches(start_folder)) return objects;
  int fd;
  do {
    fd = ::open(full_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    if (is_absent(errno)) return objects;  // nothing written there yet
    throw_io_error("list", full_path, errno);
  }
  walk.walk(fd, std::string(start_folder), full_path);
  std::sort(objects.begin(), objects.end(),
            [](const StoredObject& a, const StoredObject& b) { return a.path < b.path; });
  return objects;
}

bool LocalStorage::exists(std::string_view path) const {
  check_relative_path(path, root_.string());
  const std::string full_path = full_path_of(root_, path);
  struct stat status {};
  if (::stat(full_path.c_str(), &status) != 0) {
    if (is_absent(errno)) return false;
    throw_io_error("stat", full_path, errno);
  }
  return S_ISREG(status.st_mode);
}

SharedBytes LocalStorage::read(std::string_view path) const {
  check_relative_path(path, root_.string());
  const std::string full_path = full_path_of(root_, path);
  const FileDescriptor file(open_file(full_path));
  // The file as long as it was when opened: what a writer appends meanwhile comes with the
  // next read.
  return read_bytes(file.get(), 0, regular_file_size(file.get(), full_path), full_path);
}

SharedBytes LocalStorage::read_range(std::string_view path, std::uint64_t offset,
                                     std::uint64_t length) const {
  check_relative_path(path, root_.string());
  if (mapped_files_ && length > 0) {
    // Bytes of a kept mapping were in the file when it was mapped; appends since do not move
    // them. A range past the mapped end (the file grew, or a corrupt length) reads the file.
    if (offset < std::numeric_limits<std::uint64_t>::max() - length) {
      if (auto mapping = mapped_files_->find(path, offset + length)) {
        return mapping->slice(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
      }
    }
  }
  const std::string full_path = full_path_of(root_, path);
  const FileDescriptor file(open_file(full_path));
  const std::uint64_t size = regular_file_size(file.get(), full_path);
  // Clamp to the file, so a corrupt length in an index file cannot ask for exabytes.
  const std::uint64_t available = size > offset ? size - offset : 0;
  length = std::min(length, available);
  if (length > 0 && mapped_files_ && mapped_files_->note_unmapped_read(path)) {
    // The second piece of one file lately (rules reading the values of a step, record by
    // record, from a trial no pipeline maps): map it whole and keep it for the next pieces.
    // Not populated: a rule over losses reads a few bytes of each file, and only the pages read
    // should count in the process's memory.
    if (auto mapping = keep_whole_mapping(file.get(), path, size, false)) {
      return mapping->slice(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
    }
  }
  return read_bytes(file.get(), offset, length, full_path);
}

SharedBytes LocalStorage::read_records_range(std::string_view path, std::uint64_t offset,
                                             std::uint64_t length) const {
  if (!mapped_files_ || length == 0 ||
      offset >= std::numeric_limits<std::uint64_t>::max() - length) {
    return read_range(path, offset, length);
  }
  check_relative_path(path, root_.string());
  if (auto mapping = mapped_files_->find(path, offset + length)) {
    return mapping->slice(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
  }
  const std::string full_path = full_path_of(root_, path);
  const FileDescriptor file(open_file(full_path));
  if (length <= kLargestRecycledRead) {
    // Copied rather than mapped: a rule reads a step's records of a file once, or a few times,
    // and mapping the whole file for that, then unmapping it (a TLB shootdown on every core),
    // cost more than the copy. A range past the end of the file is cut short, as read_range
    // cuts it.
    std::shared_ptr<RecycledBuffers::Buffer> buffer =
        recycled_->take(static_cast<std::size_t>(length));
    const std::size_t got = pread_fully(file.get(), buffer->bytes.get(),
                                        static_cast<std::size_t>(length), offset, full_path);
    const std::span<const std::byte> bytes(buffer->bytes.get(), got);
    return SharedBytes::of_recycled_copy(std::move(buffer), bytes);
  }
  const std::uint64_t size = regular_file_size(file.get(), full_path);
  // A range past the end (a corrupt length, a file cut short) is read as read_range reads it,
  // which clamps it: a mapping must lie within the file.
  if (offset + length > size) return read_range(path, offset, length);
  // Populated when the caller takes most of the file: one call fills the page table, where
  // touching the pages one by one costs a fault per 16 of them. Not a large file's pages for a
  // few records, which would all count in the process's memory.
  const bool populate = size <= kPopulateLimit && length >= size / 2;
  if (auto mapping = keep_whole_mapping(file.get(), path, size, populate)) {
    return mapping->slice(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
  }
  return read_bytes(file.get(), offset, length, full_path);
}

std::optional<SharedBytes> LocalStorage::map_whole(std::string_view path, MapFor purpose) const {
  if (!mapped_files_) return std::nullopt;
  check_relative_path(path, root_.string());
  const std::string full_path = full_path_of(root_, path);
  const FileDescriptor file(open_file(full_path));
  const std::uint64_t size = regular_file_size(file.get(), full_path);
  if (size == 0) return SharedBytes();
  // A caller about to read most of the file has its pages mapped at once; not a very large
  // file's, which would all count in the process's memory. Pages kept for later reads are mapped
  // as they are read: a pipeline keeps every file its rules may read values from, and they read
  // one worker's (Tensor::value's first), so populating the rest cost 4% of an all-rules replay
  // of many small tensors.
  return keep_whole_mapping(file.get(), path, size,
                            purpose == MapFor::ReadingNow && size <= kPopulateLimit);
}

std::optional<SharedBytes> LocalStorage::keep_whole_mapping(int fd, std::string_view path,
                                                            std::uint64_t size,
                                                            bool populate) const {
  if (size <= kKeptCopyLimit) {
    SharedBytes copy =
        read_kept_copy(fd, static_cast<std::size_t>(size), full_path_of(root_, path));
    mapped_files_->keep(path, copy);
    return copy;
  }
  std::shared_ptr<const LeasedMapping> lease =
      LeasedMapping::map(fd, 0, static_cast<std::size_t>(size), populate);
  if (!lease) return std::nullopt;
  SharedBytes mapping = SharedBytes::of_kept_mapping(lease, lease->bytes());
  mapped_files_->keep(path, mapping, std::move(lease));
  return mapping;
}

std::unique_ptr<StoredFile> LocalStorage::open_stored_file(std::string_view path) const {
  if (!mapped_files_ || !is_relative_path(path)) return Storage::open_stored_file(path);
  return std::make_unique<LocalStoredFile>(*this, path, mapped_files_->handle(path));
}

std::unique_ptr<RandomAccessFile> LocalStorage::open_random_access(std::string_view path) const {
  check_relative_path(path, root_.string());
  return std::make_unique<LocalRandomAccessFile>(full_path_of(root_, path));
}

SharedBytes LocalStorage::read_bytes(int fd, std::uint64_t offset, std::uint64_t length,
                                     const std::string& full_path) const {
  if (length == 0) return {};
  if (length >= map_threshold_) {
    if (auto mapped = map_range(fd, offset, static_cast<std::size_t>(length))) return *mapped;
    // Not every file can be leased (open for writing elsewhere, not ours, a file system without
    // leases) or mapped (procfs, some FUSE ones): copying works everywhere.
  }
  return read_into_shared_buffer(fd, static_cast<std::size_t>(length), offset, full_path);
}

}  // namespace rulestream
