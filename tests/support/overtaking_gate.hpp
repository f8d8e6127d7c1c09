#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace rulestream::testing {

// For tests of work done on several steps at once: holds step 0's work until step 1's has
// finished, so that the two finish out of step order whenever two threads do them, and says
// whether they did. The wait is bounded, so that a run on one thread (where nothing else works
// meanwhile) ends rather than hangs.
//
// Concurrency: any thread.
class OvertakingGate {
 public:
  // A wait of zero: step 0 never waits (a run that needs no overtaking).
  explicit OvertakingGate(std::chrono::milliseconds wait = std::chrono::milliseconds(0))
      : wait_(wait) {}

  // Called at the end of the work on `step`: step 0 waits for step 1 here; step 1 lets it go.
  void finished(std::int64_t step);
  // Whether step 1 finished while step 0 waited.
  bool overtaken() const;

 private:
  const std::chrono::milliseconds wait_;
  mutable std::mutex mutex_;
  std::condition_variable step_one_done_;
  bool step_one_finished_ = false;  // guarded by mutex_
  bool overtaken_ = false;          // guarded by mutex_
};

}  // namespace rulestream::testing
