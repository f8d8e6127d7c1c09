#include "sources/local/inotify_events.hpp"

#include <sys/inotify.h>

#include <cstring>

namespace rulestream {

std::size_t parse_inotify_events(std::span<const char> bytes, std::vector<InotifyEvent>& events) {
  std::size_t offset = 0;
  while (bytes.size() - offset >= sizeof(inotify_event)) {
    // The buffer has no alignment guarantee for the record, so copy the header out.
    inotify_event header;
    std::memcpy(&header, bytes.data() + offset, sizeof header);
    const std::size_t record_size = sizeof(inotify_event) + header.len;
    if (bytes.size() - offset < record_size) break;
    // The name is NUL-terminated and padded with NULs up to `len`.
    const char* name = bytes.data() + offset + sizeof(inotify_event);
    events.push_back(InotifyEvent{.watch = header.wd,
                                  .mask = header.mask,
                                  .cookie = header.cookie,
                                  .name = std::string(name, ::strnlen(name, header.len))});
    offset += record_size;
  }
  return offset;
}

}  // namespace rulestream
