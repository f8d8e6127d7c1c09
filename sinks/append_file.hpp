#pragma once

#include <filesystem>
#include <string_view>

namespace rulestream {

// The append rules shared by FileSink and the webhook's dead-letter file: open with O_APPEND
// (never truncating, never creating parent folders) and write each line with one write(), so
// lines stay whole even when two processes append to the same file.

// Returns the descriptor; throws StorageError naming the path and the system's reason.
int open_for_append(const std::filesystem::path& path);

// Appends `line` (which carries its own '\n'). Returns 0 or the errno of the failure.
int append_line(int fd, std::string_view line);

}  // namespace rulestream
