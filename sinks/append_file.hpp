#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace rulestream {

// The append rules shared by FileSink and the dead-letter files of the sinks that deliver over
// HTTP: open with O_APPEND (never truncating, never creating parent folders) and write each line
// with one write(), so lines stay whole even when two processes append to the same file.

// Returns the descriptor; throws StorageError naming the path and the system's reason.
int open_for_append(const std::filesystem::path& path);

// Appends `line` (which carries its own '\n'). Returns 0 or the errno of the failure.
int append_line(int fd, std::string_view line);

// Throws StorageError (as open_for_append would) when `path` could not be opened for
// appending, without creating it: an existing file is opened and closed, a missing one needs a
// folder this process may create files in.
void check_appendable(const std::filesystem::path& path);

// A file that is opened for appending at its first line, not before: a dead-letter file exists
// only once something was dead-lettered, so a sink that never gives up on an event leaves no
// empty file behind. The constructor checks (check_appendable) that it could be opened.
// Not thread-safe: one thread appends.
class AppendOnDemandFile {
 public:
  explicit AppendOnDemandFile(std::filesystem::path path);
  ~AppendOnDemandFile();
  AppendOnDemandFile(const AppendOnDemandFile&) = delete;
  AppendOnDemandFile& operator=(const AppendOnDemandFile&) = delete;

  // Appends `line` (with its '\n'), opening the file first if need be. Returns an empty string,
  // or why the line could not be written (naming the file).
  std::string append(std::string_view line);
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

}  // namespace rulestream
