#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>

namespace rulestream {

// One refresh at a time for many callers, shared by the callers that arrive while one runs.
//
// What a caller of refresh() is owed: everything that existed when it called. A refresh already
// under way may have listed its storage before that, so it does not count; the first refresh to
// start after the call does. A caller that finds one running therefore waits for it to end and
// then for the next one, which it starts itself unless another waiter did first. However many
// callers arrive during one refresh, they wait for one more, not one each: a pipeline whose
// threads each pin a live trial a rule compares with would otherwise list that trial's storage
// (three listings, on S3 three requests) once per thread, one after the other.
//
// A refresh that throws satisfies nobody: its exception goes to the caller that ran it, and the
// callers waiting on it run one of their own (and meet the same error, if it lasts).
//
// Concurrency: run() from any thread. The refresh bodies never overlap, and each one's writes
// are seen by the next (both hold mutex_ to start and end), so state that only bodies touch
// needs no lock of its own.
class SharedRefresh {
 public:
  // Returns once a refresh that started after this call has ended without throwing: `refresh`
  // run here, or one run by another caller. Throws what `refresh` threw when it ran here.
  template <class Refresh>
  void run(Refresh&& refresh) {
    std::unique_lock lock(mutex_);
    const std::uint64_t owed = started_ + 1;
    if (running_) {
      const auto asked = std::chrono::steady_clock::now();
      ++waiting_;
      // Until the refresh owed has ended, or none runs (this caller then starts it). One that
      // runs when this waiter wakes was started by another waiter, after this call: it is the
      // one owed, and this waiter waits on for it.
      ended_.wait(lock, [&] { return completed_ >= owed || !running_; });
      --waiting_;
      waited_nanoseconds_ += (std::chrono::steady_clock::now() - asked).count();
      if (completed_ >= owed) return;
    }
    running_ = true;
    const std::uint64_t ordinal = ++started_;
    lock.unlock();
    try {
      refresh();
    } catch (...) {
      end(0);
      throw;
    }
    end(ordinal);
  }

  // How long callers waited for other callers' refreshes, all together. Any thread.
  std::chrono::nanoseconds waited() const {
    std::lock_guard lock(mutex_);
    return std::chrono::nanoseconds(waited_nanoseconds_);
  }
  // How many callers wait for a refresh now. Any thread.
  std::size_t waiting() const {
    std::lock_guard lock(mutex_);
    return waiting_;
  }
  // How many refreshes have started. Any thread.
  std::uint64_t started() const {
    std::lock_guard lock(mutex_);
    return started_;
  }

 private:
  // `ordinal` 0: the refresh threw.
  void end(std::uint64_t ordinal) {
    {
      std::lock_guard lock(mutex_);
      running_ = false;
      if (ordinal > completed_) completed_ = ordinal;
    }
    ended_.notify_all();
  }

  mutable std::mutex mutex_;
  std::condition_variable ended_;
  // Guarded by mutex_.
  bool running_ = false;
  std::uint64_t started_ = 0;    // refreshes started, numbered from 1
  std::uint64_t completed_ = 0;  // the number of the latest that ended without throwing
  std::size_t waiting_ = 0;
  std::int64_t waited_nanoseconds_ = 0;
};

}  // namespace rulestream
