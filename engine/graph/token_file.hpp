#pragma once

#include <string>

namespace rulestream {

// The first line of the file at `path`, without surrounding white space. A token is a secret,
// so it is read from a file (a mounted Kubernetes secret) rather than given in a rules file or
// on a command line, where any user sees it in ps. Throws StorageError "WHERE: cannot read
// WHAT PATH" or "WHERE: WHAT PATH is empty" (`what`: "the bearer token file", ...); the
// message never holds the token.
std::string read_token_file(const std::string& path, const std::string& where,
                            const std::string& what);

}  // namespace rulestream
