#pragma once

#include <filesystem>
#include <mutex>

#include "sinks/sink.hpp"

namespace rulestream {

// Appends each event as one JSON line, flushed per event; never truncates (a restarted watch
// adds to what is there). Throws StorageError naming the path when it cannot be opened for
// appending.
class FileSink final : public Sink {
 public:
  explicit FileSink(std::filesystem::path path);
  ~FileSink() override;
  std::string describe() const override;
  void write(const RuleEvent& event) override;
  void flush() override;

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::mutex mutex_;
};

}  // namespace rulestream
