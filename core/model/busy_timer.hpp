#pragma once

#include <time.h>

#include <chrono>

namespace rulestream {

// Adds the CPU time the calling thread spends between construction and destruction to a total,
// however the scope ends. CPU time rather than wall time: a serial node's share of a run's CPU
// (what bounds the speedup more threads can give) must not grow when the machine is loaded and
// the thread waits for a core.
//
// Concurrency: the total belongs to one thread at a time (a serial node's), as the timer.
class BusyTimer {
 public:
  explicit BusyTimer(std::chrono::nanoseconds& total) : total_(total), start_(now()) {}
  BusyTimer(const BusyTimer&) = delete;
  BusyTimer& operator=(const BusyTimer&) = delete;
  ~BusyTimer() { total_ += now() - start_; }

  // The calling thread's CPU time so far.
  static std::chrono::nanoseconds now() {
    timespec spec{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec);
    return std::chrono::seconds(spec.tv_sec) + std::chrono::nanoseconds(spec.tv_nsec);
  }

 private:
  std::chrono::nanoseconds& total_;
  std::chrono::nanoseconds start_;
};

// The CPU time the calling thread has spent on another node's work while it waited for that node:
// a reader that runs the store's ingestion while it waits for the store's lock
// (ReaderSlotsMutex). Kept on this floor so that every floor timing a node's own work can leave
// it out (a rule's parallel sections, a serial node's busy time).
inline std::chrono::nanoseconds& thread_cpu_lent() {
  thread_local std::chrono::nanoseconds lent{0};
  return lent;
}

}  // namespace rulestream
