#include "sources/s3/process_credentials.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>

#include "core/model/exceptions.hpp"
#include "sources/s3/credentials_json.hpp"

namespace rulestream {

ProcessCredentialProvider::ProcessCredentialProvider(std::string command, std::string where)
    : command_(std::move(command)), source_("credential_process of " + std::move(where)) {}

S3Credentials ProcessCredentialProvider::fetch() {
  // "e": the pipe is close-on-exec, so that other children we start do not hold it open.
  FILE* pipe = ::popen(command_.c_str(), "re");
  if (pipe == nullptr) throw StorageError(source_ + ": cannot start it");
  std::string output;
  std::array<char, 4096> chunk{};
  while (const std::size_t read = std::fread(chunk.data(), 1, chunk.size(), pipe)) {
    output.append(chunk.data(), read);
  }
  const int status = ::pclose(pipe);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw StorageError(source_ + ": the command " +
                       (status != -1 && WIFEXITED(status)
                            ? "exited with status " + std::to_string(WEXITSTATUS(status))
                            : std::string("did not exit normally")));
  }
  return parse_credentials_json(output, "SessionToken", source_, 1);
}

}  // namespace rulestream
