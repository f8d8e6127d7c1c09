// read_token_file: a secret's first line, trimmed; errors name the place and the file, never
// the token.
#include "engine/graph/token_file.hpp"

#include <gtest/gtest.h>

#include "core/model/exceptions.hpp"
#include "tests/support/test_support.hpp"

namespace rulestream {
namespace {

std::string error_of(const std::string& path) {
  try {
    read_token_file(path, "--token-file", "the token file");
  } catch (const StorageError& error) {
    return error.what();
  }
  return "";
}

TEST(TokenFile, TheFirstLineTrimmed) {
  testing::TempDir dir;
  testing::write_text_file(dir.path() / "token", " \tsecret-123\r\nsecond line\n");
  EXPECT_EQ(read_token_file((dir.path() / "token").string(), "x", "y"), "secret-123");
}

TEST(TokenFile, AMissingOrEmptyFileIsAnErrorNamingIt) {
  testing::TempDir dir;
  const std::string missing = (dir.path() / "missing").string();
  EXPECT_EQ(error_of(missing), "--token-file: cannot read the token file " + missing);
  const std::string empty = (dir.path() / "empty").string();
  testing::write_text_file(empty, "  \n\nsecret-on-line-three\n");
  const std::string message = error_of(empty);
  EXPECT_EQ(message, "--token-file: the token file " + empty + " is empty");
  EXPECT_EQ(message.find("secret"), std::string::npos);
}

}  // namespace
}  // namespace rulestream
