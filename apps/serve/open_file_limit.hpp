#pragma once

// A service that follows a thousand jobs holds a few descriptors for each while it runs (its
// io_context's epoll, eventfd and timerfd; the files it is reading) besides its sockets: more
// than the soft RLIMIT_NOFILE many systems start a process with (1024). The hard limit is what
// an administrator allows; raising the soft one up to it needs no privilege.

#include <string>

namespace rulestream {

// Raises the process's soft RLIMIT_NOFILE to its hard limit. Returns a line saying what it did
// ("raised the open-file limit from 1024 to 524288"), or why it could not; empty when the soft
// limit already was the hard one. Call once at start, before threads open files.
std::string raise_open_file_limit();

}  // namespace rulestream
