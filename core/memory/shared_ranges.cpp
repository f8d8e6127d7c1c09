#include "core/memory/shared_ranges.hpp"

#include <algorithm>
#include <thread>
#include <utility>

namespace rulestream {

SharedRanges::SharedRanges(std::size_t count, std::size_t grain, Body body)
    : count_(count),
      grain_(std::max<std::size_t>(grain, 1)),
      ranges_((count + grain_ - 1) / grain_),
      body_(std::move(body)) {}

bool SharedRanges::drain() {
  bool ran = false;
  for (;;) {
    const std::size_t range = next_.fetch_add(1, std::memory_order_relaxed);
    if (range >= ranges_) return ran;
    ran = true;
    if (!failed_.load(std::memory_order_relaxed)) {
      const std::size_t begin = range * grain_;
      try {
        body_(begin, std::min(count_, begin + grain_));
      } catch (...) {
        std::lock_guard lock(error_mutex_);
        if (!error_) error_ = std::current_exception();
        failed_.store(true, std::memory_order_relaxed);
      }
    }
    // Release: what the range wrote is seen by the owner once wait_done() sees it counted.
    done_.fetch_add(1, std::memory_order_release);
  }
}

void SharedRanges::wait_done() const {
  // The ranges still running are short (a few hundred of an index file's positions): spin a
  // little, then give the core up.
  for (int spins = 0; done_.load(std::memory_order_acquire) < ranges_; ++spins) {
    if (spins > 64) std::this_thread::yield();
  }
}

void SharedRanges::rethrow() const {
  if (failed_.load(std::memory_order_acquire)) {
    std::exception_ptr error;
    {
      std::lock_guard lock(error_mutex_);
      error = error_;
    }
    std::rethrow_exception(error);
  }
}

}  // namespace rulestream
