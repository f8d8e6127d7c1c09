#pragma once

// Sinks of jobs that ended with events still queued in them (a job's own webhook whose peer is
// down): kept delivering after their job, so that a job's end never waits on a peer. Each is
// let go once nothing of its job is queued in it, or when the service stops: its queue then
// dead-letters what is left within its bound (DeliveryQueue's destructor).
//
// Thread-safe: keep() from the jobs' threads, undelivered() from the HTTP threads.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "sinks/sink.hpp"

namespace rulestream {

class LingeringSinks {
 public:
  LingeringSinks() = default;
  // Lets go of every sink side by side (16 threads at most): each dead-letters within its own
  // bound, and one dead peer's wait does not add to the next's.
  ~LingeringSinks();
  LingeringSinks(const LingeringSinks&) = delete;
  LingeringSinks& operator=(const LingeringSinks&) = delete;

  // Keeps `sink`, which holds events of `trial`, while any of them is undelivered; lets go of
  // those kept before whose events have all settled.
  void keep(std::string trial, std::shared_ptr<Sink> sink);
  // Events of `trial` the kept sinks still hold.
  std::int64_t undelivered(std::string_view trial) const;
  std::size_t size() const;

 private:
  struct Kept {
    std::string trial;
    std::shared_ptr<Sink> sink;
  };
  mutable std::mutex mutex_;
  std::vector<Kept> kept_;
};

}  // namespace rulestream
