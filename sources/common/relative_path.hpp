#pragma once

#include <string>
#include <string_view>

namespace rulestream {

// Trial paths come from listings but also from index files (event_file_name): never let one
// climb out of the trial. Throws StorageError naming the path and the trial `root` when `path`
// is absolute or has a ".." segment.
void check_relative_path(std::string_view path, const std::string& root);
// Whether check_relative_path would let `path` through.
bool is_relative_path(std::string_view path);

}  // namespace rulestream
