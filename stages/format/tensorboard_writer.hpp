#pragma once

// Writes TensorBoard event files as TensorBoard's writers lay them out: a file_version record
// first, then one Event per summary value, every record framed with both CRCs. For the
// simulator (`simulate --format tensorboard`), the tests and the benchmarks. Records are
// appended to the file as they are added (an open file, growing, as a training job's is), and
// each add_* is one write: a reader following the file sees whole records or a record cut
// short, never anything else. Not thread-safe: one writer per file.

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>

namespace rulestream {

class TensorBoardWriter {
 public:
  // How scalars are written: PyTorch's and tensorboardX's simple_value, or TF2's one-element
  // float tensor under the "scalars" plugin (metadata on a tag's first value only).
  enum class ScalarStyle { SimpleValue, Tensor };

  struct Options {
    ScalarStyle scalars = ScalarStyle::SimpleValue;
    bool file_version = true;  // tensorboardX 1.x wrote none
  };

  // Creates (or truncates) `path`, its folders too, and writes the file_version record.
  // StorageError naming the file when it cannot be written.
  TensorBoardWriter(std::filesystem::path path, Options options);
  explicit TensorBoardWriter(std::filesystem::path path)
      : TensorBoardWriter(std::move(path), Options{}) {}
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  void add_scalar(const std::string& tag, std::int64_t step, float value, double wall_time);

  // A legacy HistogramProto of `values` with TensorBoard's default bucket limits.
  void add_histogram(const std::string& tag, std::int64_t step, std::span<const float> values,
                     double wall_time);

  // Any bytes, as they are: to test readers against text written into an event file.
  void append_raw(std::string_view bytes);

  const std::filesystem::path& path() const { return path_; }

 private:
  void append_event(const std::string& payload);

  std::filesystem::path path_;
  Options options_;
  int fd_ = -1;
  std::unordered_set<std::string> tensor_tags_;  // tags whose first value carried the metadata
};

}  // namespace rulestream
