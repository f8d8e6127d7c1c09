#include "sources/common/relative_path.hpp"

#include <algorithm>

#include "core/model/exceptions.hpp"

namespace rulestream {

bool is_relative_path(std::string_view path) {
  bool escapes = path.starts_with('/');
  std::size_t start = 0;
  while (!escapes && start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    escapes = path.substr(start, end - start) == "..";
    start = end + 1;
  }
  return !escapes;
}

void check_relative_path(std::string_view path, const std::string& root) {
  if (!is_relative_path(path)) {
    throw StorageError("path \"" + std::string(path) + "\" is not inside the trial " + root);
  }
}

}  // namespace rulestream
