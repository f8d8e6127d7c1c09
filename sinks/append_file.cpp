#include "sinks/append_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

#include "pipeline/model/exceptions.hpp"

namespace rulestream {

int open_for_append(const std::filesystem::path& path) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    throw StorageError("cannot open " + path.string() +
                       " for appending: " + std::generic_category().message(errno));
  }
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

}  // namespace rulestream
