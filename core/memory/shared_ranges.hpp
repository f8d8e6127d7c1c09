#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>

namespace rulestream {

// [0, count) in ranges of `grain`, handed out one at a time to every thread that asks: the
// thread that made it, tasks it starts, and threads that would otherwise wait for it
// (ReaderSlotsMutex::offer: readers held up by a writer run the writer's ranges). Unlike a
// oneTBB parallel_for, a thread needs no place in the caller's arena to take part.
//
// Concurrency: drain() from any number of threads at once; the owner calls wait_done() and then
// rethrow() once no other thread can still call drain() (ReaderSlotsMutex::withdraw). Every
// range runs exactly once. An exception from `body` is kept (the first one) and the ranges not
// yet started are skipped; rethrow() throws it.
class SharedRanges {
 public:
  using Body = std::function<void(std::size_t begin, std::size_t end)>;

  SharedRanges(std::size_t count, std::size_t grain, Body body);
  SharedRanges(const SharedRanges&) = delete;
  SharedRanges& operator=(const SharedRanges&) = delete;

  // Takes ranges and runs them until none is left; true when this thread ran any.
  bool drain();
  // Until every range taken has run (other threads may still be running theirs).
  void wait_done() const;
  // The first exception a range threw, if any.
  void rethrow() const;

 private:
  const std::size_t count_;
  const std::size_t grain_;
  const std::size_t ranges_;
  const Body body_;
  std::atomic<std::size_t> next_{0};
  std::atomic<std::size_t> done_{0};
  std::atomic<bool> failed_{false};
  mutable std::mutex error_mutex_;
  std::exception_ptr error_;  // guarded by error_mutex_
};

}  // namespace rulestream
