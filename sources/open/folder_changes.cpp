#include "sources/open/folder_changes.hpp"

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <system_error>
#include <thread>

namespace rulestream {
namespace {

constexpr std::uint32_t kChanges = IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_MODIFY;

}  // namespace

FolderChanges::FolderChanges(std::filesystem::path root) : root_(std::move(root)) {
  fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd_ < 0) return;
  watch_tree(root_);
  if (folders_.empty()) {  // not even the root: nothing to wait on
    ::close(fd_);
    fd_ = -1;
  }
}

FolderChanges::~FolderChanges() {
  if (fd_ >= 0) ::close(fd_);
}

void FolderChanges::watch_tree(const std::filesystem::path& folder) {
  const int watch = ::inotify_add_watch(fd_, folder.c_str(), kChanges | IN_ONLYDIR);
  if (watch < 0) return;  // gone already, or no watch left: the caller's poll still looks
  folders_[watch] = folder;
  std::error_code error;
  for (std::filesystem::directory_iterator it(folder, error), end; !error && it != end;
       it.increment(error)) {
    std::error_code type_error;
    // Linked folders are not followed: a link to an ancestor would never end.
    if (it->is_directory(type_error) && !it->is_symlink(type_error)) watch_tree(it->path());
  }
}

bool FolderChanges::wait(std::chrono::milliseconds timeout) {
  if (fd_ < 0) {
    std::this_thread::sleep_for(timeout);
    return false;
  }
  pollfd ready{.fd = fd_, .events = POLLIN, .revents = 0};
  if (::poll(&ready, 1, static_cast<int>(timeout.count())) <= 0) return false;
  // Events are read whole (the kernel never splits one): a buffer of several at a time.
  alignas(inotify_event) std::array<char, 16 * (sizeof(inotify_event) + 256)> buffer{};
  bool changed = false;
  for (;;) {
    const ssize_t got = ::read(fd_, buffer.data(), buffer.size());
    if (got <= 0) break;  // EAGAIN: all read
    changed = true;
    for (ssize_t at = 0; at < got;) {
      inotify_event event{};
      std::memcpy(&event, buffer.data() + at, sizeof(event));
      const char* name = buffer.data() + at + sizeof(inotify_event);
      if ((event.mask & IN_ISDIR) != 0 && (event.mask & (IN_CREATE | IN_MOVED_TO)) != 0 &&
          event.len > 0) {
        if (const auto folder = folders_.find(event.wd); folder != folders_.end()) {
          watch_tree(folder->second / name);  // a run's folder, the job's index/000000000/
        }
      }
      at += static_cast<ssize_t>(sizeof(inotify_event) + event.len);
    }
  }
  return changed;
}

}  // namespace rulestream
