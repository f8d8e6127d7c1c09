#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rulestream::testing {

// A fresh folder under the system temp dir, removed with its contents when destroyed.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// smdebug-samples: $RULESTREAM_SAMPLES if set, else ../shared/smdebug-samples beside the
// project. nullopt when absent (tests then GTEST_SKIP with a clear message); with
// RULESTREAM_REQUIRE_SAMPLES=1 (CI) the calling test also fails.
std::optional<std::filesystem::path> samples_dir();

// tensorboard-samples (real TensorBoard logdirs and what an independent reader found in them):
// $RULESTREAM_TENSORBOARD_SAMPLES if set, else ../shared/tensorboard-samples beside the project;
// nullopt and, with RULESTREAM_REQUIRE_SAMPLES=1, a failure of the calling test when absent.
std::optional<std::filesystem::path> tensorboard_samples_dir();

// The files named "*`suffix`" under <trial>/`folder` of every trial under `samples`/trials,
// sorted: sample_files(samples, "index", ".json") lists every index file.
std::vector<std::filesystem::path> sample_files(const std::filesystem::path& samples,
                                                std::string_view folder, std::string_view suffix);

// The rulestream binary built with the tests.
std::filesystem::path rulestream_binary();

std::string read_text_file(const std::filesystem::path& path);
void write_text_file(const std::filesystem::path& path, std::string_view content);

// Runs a command through /bin/sh; returns its exit status and what it printed to stdout
// (stderr is captured separately).
struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
CommandResult run_command(const std::string& command);

// Polls `condition` until it holds or `limit` passes: no fixed sleeps, so a loaded machine
// only makes the tests slower. Returns whether it held.
bool eventually(const std::function<bool()>& condition,
                std::chrono::milliseconds limit = std::chrono::seconds(20));

}  // namespace rulestream::testing
