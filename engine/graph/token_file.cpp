#include "engine/graph/token_file.hpp"

#include <fstream>

#include "core/model/exceptions.hpp"

namespace rulestream {

std::string read_token_file(const std::string& path, const std::string& where,
                            const std::string& what) {
  std::ifstream in(path);
  if (!in) throw StorageError(where + ": cannot read " + what + " " + path);
  std::string token;
  std::getline(in, token);
  const auto first = token.find_first_not_of(" \t\r\n");
  if (first == std::string::npos)
    throw StorageError(where + ": " + what + " " + path + " is empty");
  return token.substr(first, token.find_last_not_of(" \t\r\n") - first + 1);
}

}  // namespace rulestream
