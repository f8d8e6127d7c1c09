#include "sinks/append_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

#include "core/model/exceptions.hpp"

namespace rulestream {
namespace {

[[noreturn]] void throw_cannot_append(const std::filesystem::path& path, int error) {
  throw StorageError("cannot open " + path.string() +
                     " for appending: " + std::generic_category().message(error));
}

}  // namespace

int open_for_append(const std::filesystem::path& path) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) throw_cannot_append(path, errno);
  return fd;
}

int append_line(int fd, std::string_view line) {
  // One write() normally takes the whole line. Regular files only return short on a full
  // disk or a signal; the rest is then written where it can go rather than dropped.
  while (!line.empty()) {
    const ssize_t written = ::write(fd, line.data(), line.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    line.remove_prefix(static_cast<std::size_t>(written));
  }
  return 0;
}

void check_appendable(const std::filesystem::path& path) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);  // no O_CREAT: nothing is made
  } while (fd < 0 && errno == EINTR);
  if (fd >= 0) {
    ::close(fd);
    return;
  }
  if (errno != ENOENT) throw_cannot_append(path, errno);
  // Missing: creating it needs a folder that exists and that we may write into. (ENOENT from
  // a missing folder shows as such here too.)
  const std::filesystem::path folder = path.has_parent_path() ? path.parent_path() : ".";
  if (::access(folder.c_str(), W_OK | X_OK) != 0) throw_cannot_append(path, errno);
}

AppendOnDemandFile::AppendOnDemandFile(std::filesystem::path path) : path_(std::move(path)) {
  check_appendable(path_);
}

AppendOnDemandFile::~AppendOnDemandFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string AppendOnDemandFile::append(std::string_view line) {
  if (fd_ < 0) {
    try {
      fd_ = open_for_append(path_);
    } catch (const StorageError& error) {  // removed or made read-only since the check
      return error.what();
    }
  }
  if (const int error = append_line(fd_, line); error != 0) {
    return "cannot append to " + path_.string() + ": " + std::generic_category().message(error);
  }
  return {};
}

}  // namespace rulestream
