#include "tests/support/test_support.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace rulestream::testing {

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path_ = std::filesystem::temp_directory_path() /
          ("rulestream-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

namespace {

// A folder of samples that must hold `inner`: `fallback`, or the folder $`variable` names.
std::optional<std::filesystem::path> sample_folder(std::filesystem::path fallback,
                                                   const char* variable, const char* inner,
                                                   std::string_view what) {
  std::filesystem::path dir = std::move(fallback);
  if (const char* env = std::getenv(variable); env != nullptr && *env != '\0') dir = env;
  if (!std::filesystem::exists(dir / inner)) {
    // CI has the samples beside the clone: there a missing folder is a failure, not a skip.
    if (const char* required = std::getenv("RULESTREAM_REQUIRE_SAMPLES");
        required != nullptr && std::string_view(required) == "1") {
      ADD_FAILURE() << "the " << what << " are required (RULESTREAM_REQUIRE_SAMPLES=1) but "
                    << (dir / inner) << " does not exist";
    }
    return std::nullopt;
  }
  return dir;
}

}  // namespace

std::optional<std::filesystem::path> samples_dir() {
  return sample_folder(RULESTREAM_SAMPLES_DIR, "RULESTREAM_SAMPLES", "trials", "smdebug samples");
}

std::optional<std::filesystem::path> tensorboard_samples_dir() {
  return sample_folder(
      std::filesystem::path(RULESTREAM_SAMPLES_DIR).parent_path() / "tensorboard-samples",
      "RULESTREAM_TENSORBOARD_SAMPLES", "expected", "TensorBoard samples");
}

std::vector<std::filesystem::path> sample_files(const std::filesystem::path& samples,
                                                std::string_view folder, std::string_view suffix) {
  std::vector<std::filesystem::path> files;
  for (const auto& trial : std::filesystem::directory_iterator(samples / "trials")) {
    const auto dir = trial.path() / folder;
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
      if (entry.is_regular_file() && entry.path().string().ends_with(suffix)) {
        files.push_back(entry.path());
      }
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::filesystem::path rulestream_binary() {
  if (const char* env = std::getenv("RULESTREAM_BINARY"); env != nullptr && *env != '\0') {
    return env;
  }
  return RULESTREAM_BINARY_PATH;
}

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

void write_text_file(const std::filesystem::path& path, std::string_view content) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

CommandResult run_command(const std::string& command) {
  TempDir scratch;
  const auto out_path = scratch.path() / "out";
  const auto err_path = scratch.path() / "err";
  const std::string full = command + " >'" + out_path.string() + "' 2>'" + err_path.string() + "'";
  const int status = std::system(full.c_str());
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_text_file(out_path);
  result.err = read_text_file(err_path);
  return result;
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return condition();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace rulestream::testing
