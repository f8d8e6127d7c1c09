#include "sinks/file_sink.hpp"

#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <system_error>

#include "sinks/append_file.hpp"

namespace rulestream {

FileSink::FileSink(std::filesystem::path path)
    : path_(std::move(path)), fd_(open_for_append(path_)) {}

FileSink::~FileSink() {
  ::close(fd_);
}

std::string FileSink::describe() const {
  return "file " + path_.string();
}

void FileSink::write(const RuleEvent& event) {
  std::string line = event.to_json();
  line += '\n';
  int error;
  {
    const std::lock_guard lock(mutex_);
    error = append_line(fd_, line);
  }
  if (error == 0) {
    counters_.delivered();
  } else {
    counters_.failed();
    // write() must not throw (the pipeline would stop); the event goes to stderr instead so it
    // is not lost.
    std::cerr << "rulestream: file " + path_.string() +
                     ": cannot append a rule event: " + std::generic_category().message(error) +
                     ": " + line;
  }
}

void FileSink::flush() {
  const std::lock_guard lock(mutex_);
  int result;
  do {
    result = ::fdatasync(fd_);
  } while (result != 0 && errno == EINTR);
  // EINVAL: a pipe or character device (/dev/stdout), which has nothing to sync.
  if (result != 0 && errno != EINVAL) {
    std::cerr << "rulestream: file " + path_.string() +
                     ": cannot sync to disk: " + std::generic_category().message(errno) + "\n";
  }
}

}  // namespace rulestream
