#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace rulestream {

// One `struct inotify_event` record, with its name copied out of the kernel's padding.
struct InotifyEvent {
  int watch = -1;  // -1 for IN_Q_OVERFLOW, which belongs to no watch
  std::uint32_t mask = 0;
  std::uint32_t cookie = 0;
  std::string name;  // empty for events about the watched folder itself

  friend bool operator==(const InotifyEvent&, const InotifyEvent&) = default;
};

// Appends the whole records at the start of `bytes` (as read(2) on an inotify descriptor
// returns them) to `events`, and returns how many bytes they took. A record cut short at the end
// is left alone: the caller keeps those bytes and appends the next read to them.
std::size_t parse_inotify_events(std::span<const char> bytes, std::vector<InotifyEvent>& events);

}  // namespace rulestream
