#pragma once

#include <filesystem>
#include <mutex>

#include "sinks/sink.hpp"

namespace rulestream {

// Appends each event as one JSON line, flushed per event; never truncates (a restarted watch
// adds to what is there). Throws StorageError naming the path when it cannot be opened for
// appending. A line that cannot be appended (a full disk) goes to stderr and counts as a
// failure in delivery().
class FileSink final : public Sink {
 public:
  explicit FileSink(std::filesystem::path path);
  ~FileSink() override;
  std::string describe() const override;
  void write(const RuleEvent& event) override;
  void flush() override;
  std::optional<SinkDeliveryCounts> delivery() const override { return counters_.snapshot(); }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::mutex mutex_;
  SinkDeliveryCounters counters_;
};

}  // namespace rulestream
